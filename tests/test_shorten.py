"""A kernel name clipped for a table cell: within its width, and one ellipsis marks the cut
(`expf_loop_f32…`, never `expf_loop_f32<……`, which read as two cuts)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.base.text import pct, shorten


def test_a_cut_after_a_fold_leaves_one_ellipsis() -> None:
    assert shorten("void expf_loop_f32<256>(float *, long)", 16) == "expf_loop_f32…"
    assert shorten("void one_blocktiling<64, 64, 8, 8>(int, float *)", 18) == "one_blocktiling…"
    assert shorten("void warptiling<128>(int, float *)", 18) == "warptiling<…>(…)"  # fits: no cut


@given(st.text(alphabet="ab<>(),:* ", min_size=1, max_size=80), st.integers(min_value=2, max_value=60))
def test_a_shortened_name_fits_and_never_doubles_its_ellipsis(name: str, width: int) -> None:
    short = shorten(name, width)
    assert len(short) <= width
    assert "……" not in short


def test_a_share_above_0_never_reads_0_pct() -> None:
    # fix-first's "could save 3.41 ms (0% of the time)" was 0.38% (99.62% beside it rounds to 100%)
    shown = [pct(v) for v in (0.38, 0.5, 29.4, 0.0, 99.62, None, float("nan"))]
    assert shown == ["<1%", "<1%", "29%", "0%", "100%", "–", "–"]
