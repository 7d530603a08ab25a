"""The roofline plot: deterministic SVG, a real PNG, every drawable kernel as a marker."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from test_diff import BASE, HEAD, HOSTILE, write

from ncu_roof.analysis import Analysis, analyze
from ncu_roof.ingest import read_input
from ncu_roof.render.plot import kernel_points, render_plot

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"
REPORTS = ["rtx4090_rep_2023.1.0_reduce.ncu-rep", "a10g_rep_2023.1.1_roofline-set.ncu-rep",
           "h100pcie_rep_2025.1_full_silu.ncu-rep"]


def marker_ids(svg: bytes) -> list[tuple[str, str]]:
    """(kernel id, tier) of every marker drawn."""
    found: list[tuple[str, str]] = re.findall(r'id="kernel-(\d+)-(\w+)"', svg.decode("utf-8"))
    return found


@pytest.fixture
def small(tmp_path: Path) -> Analysis:
    return analyze([read_input(write(tmp_path, "base.csv", BASE))])


def test_svg_is_byte_identical_and_draws_each_drawable_kernel(small: Analysis) -> None:
    first = render_plot(small)
    assert first == render_plot(small)
    drawn = {int(kid) for kid, _tier in marker_ids(first)}
    expected = {k.id for k in small.kernels if kernel_points(k)}
    assert drawn == expected == {0, 1}  # kernel 2 has zero FLOPs: not on log axes
    assert "1 of 3 kernels not drawn" in first.decode("utf-8")
    assert "<a|b" not in first.decode("utf-8")  # names are shortened and XML-escaped


def test_hostile_dollar_names_do_not_trigger_mathtext(small: Analysis) -> None:
    svg = render_plot(small).decode("utf-8")
    assert "k&lt;…&gt;(…)" in svg or "k&lt;…&gt;" in svg
    assert HOSTILE not in svg


def test_png_signature_and_size(small: Analysis) -> None:
    png = render_plot(small, fmt="png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (2200, 1400)


def test_arrows_draw_base_markers(tmp_path: Path) -> None:
    base = analyze([read_input(write(tmp_path, "b.csv", BASE))])
    head = analyze([read_input(write(tmp_path, "h.csv", HEAD))])
    svg = render_plot(head, arrows=[(base.kernels[0], head.kernels[0])]).decode("utf-8")
    assert 'id="base-0"' in svg


def test_no_roofs_and_nothing_drawable_do_not_crash(tmp_path: Path) -> None:
    rows = [("zero", "(1, 1, 1)", 500.0, 0.0, 0.0), ("nan", "(1, 1, 1)", float("nan"), 1.0, 1.0)]
    analysis = analyze([read_input(write(tmp_path, "z.csv", rows, device="Mystery GPU"))])
    svg = render_plot(analysis).decode("utf-8")
    assert marker_ids(svg.encode()) == []
    assert "No roofs for this device" in svg
    assert "2 of 2 kernels not drawn" in svg


def test_unknown_format_is_a_usage_error(small: Analysis) -> None:
    from ncu_roof.errors import UsageError

    with pytest.raises(UsageError):
        render_plot(small, fmt="pdf")


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/ncu-corpus")
@pytest.mark.parametrize("report", REPORTS)
def test_corpus_reports_plot_every_kernel(report: str) -> None:
    analysis = analyze([read_input(str(CORPUS / report))])
    svg = render_plot(analysis)
    assert svg == render_plot(analysis)
    drawn = {int(kid) for kid, _ in marker_ids(svg)}
    assert drawn == {k.id for k in analysis.kernels if kernel_points(k)}
    assert len(drawn) == len(analysis.kernels)


def test_control_characters_from_the_data_give_well_formed_svg_without_warnings(
    small: Analysis,
) -> None:
    # the bug: a device name (or roofs name, source, key) with control characters made the SVG
    # ill-formed XML, and matplotlib warned about the missing glyphs
    import warnings
    import xml.etree.ElementTree as ET
    from dataclasses import replace

    device = small.devices[0]
    roofs = replace(
        device.roofs,
        name="roofs\x01",
        source="user\x02",
        sources={**{k: f"{v}\x03" for k, v in device.roofs.sources.items()}, "fp\x0432": "x\x05"},
        compute_flop_per_s={**device.roofs.compute_flop_per_s, "fp\x0432": 1e13},
        bandwidth_byte_per_s={**device.roofs.bandwidth_byte_per_s, "hbm\x06": 3e11},
    )
    hostile = replace(small, devices=(replace(device, name="GPU\x00\x1b[31m\x07\tX", roofs=roofs),))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svg = render_plot(hostile)
        render_plot(replace(hostile, devices=(replace(hostile.devices[0], name=None),)), fmt="png")
    ET.fromstring(svg)  # well-formed
    text = svg.decode("utf-8")
    assert "GPU??[31m? X — hierarchical roofline" in text
    assert "Roofs: user?" in text
