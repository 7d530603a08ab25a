"""Writing outputs: several outputs all or none (`write_all` rolls back what it staged)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ncu_roof.errors import OutputError
from ncu_roof.render import output
from ncu_roof.render.output import Piece, write_all

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


def _document(tail: bytes) -> Iterator[Piece]:
    """Text and UTF-8 bytes, as a renderer yields them."""
    yield "[ядро, "
    yield "€".encode()
    yield tail
    yield "]\n"


TAIL = ", ".join(f"k{i}𝄞" for i in range(5000)).encode()
WHOLE = "[ядро, €" + TAIL.decode() + "]\n"


def test_a_document_in_pieces_lands_whole_in_a_file_a_pipe_and_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, fifo = tmp_path / "out.json", tmp_path / "fifo"
    os.mkfifo(fifo)
    with ThreadPoolExecutor(1) as reader:  # a pipe is written through (never replaced)
        piped = reader.submit(lambda: fifo.read_text(encoding="utf-8"))
        write_all([(_document(TAIL), str(out)), (_document(TAIL), str(fifo)), (_document(TAIL), None)])
        assert piped.result(timeout=30) == WHOLE
    assert out.read_text(encoding="utf-8") == WHOLE
    assert capsys.readouterr().out == WHOLE
    assert output.joined(_document(TAIL)) == WHOLE
