"""Writing outputs: several outputs all or none (`write_all` rolls back what it staged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ncu_roof.errors import OutputError
from ncu_roof.render.output import write_all

DEV_FULL = Path("/dev/full")  # every write fails with ENOSPC


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full")
def test_a_failing_output_leaves_the_files_staged_before_it_unwritten(tmp_path: Path) -> None:
    kept = tmp_path / "kept.md"
    kept.write_text("the earlier report\n")
    new = tmp_path / "new.json"
    with pytest.raises(OutputError, match="cannot write /dev/full"):
        write_all([("new markdown\n", str(kept)), ("{}", str(new)), (b"plot", str(DEV_FULL))])
    assert kept.read_text() == "the earlier report\n"  # not replaced
    assert not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.md"]  # no staged temp file left


def test_all_outputs_land_when_every_one_can_be_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.md", tmp_path / "b.svg"
    write_all([("# a\n", str(first)), (b"<svg/>", str(second)), ("on stdout\n", None)])
    assert first.read_text() == "# a\n" and second.read_bytes() == b"<svg/>"
    assert capsys.readouterr().out == "on stdout\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.svg"]
