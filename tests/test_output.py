"""Writing outputs: several outputs all or none (`write_all` rolls back what it staged)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO

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


def test_a_document_in_pieces_is_utf8_on_stdout_after_the_text_before_it() -> None:
    """Text and bytes pieces go to stdout as one UTF-8 document, whatever stdout's encoding (the
    bytes are UTF-8 already), after the text written before it even when that is not yet flushed
    (a real, buffered stdout to a pipe, not a test's capture)."""
    script = (
        "from ncu_roof.render.output import write_output\n"
        "print('before', end='')\n"
        "write_output(iter(['[ядро, ', '€'.encode(), ', 𝄞]']), None)\n"
        "print(' after')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | {"PYTHONIOENCODING": "latin-1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, env=env, check=True)
    assert done.stdout == b"before" + "[ядро, €, 𝄞]".encode() + b" after\n"


def test_an_output_through_a_symbolic_link_replaces_the_file_and_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_text("old", encoding="utf-8")
    (tmp_path / "link.json").symlink_to("real.json")
    write_all([("new", str(tmp_path / "link.json"))])
    assert (tmp_path / "link.json").is_symlink()
    assert (tmp_path / "real.json").read_text(encoding="utf-8") == "new"
    output.write_output("newer", str(tmp_path / "link.json"))
    assert (tmp_path / "link.json").is_symlink()
    assert (tmp_path / "real.json").read_text(encoding="utf-8") == "newer"


def test_an_output_naming_an_input_is_refused_and_the_input_kept(tmp_path: Path) -> None:
    from conftest import run_cli

    from ncu_roof.errors import UsageError

    source = (Path(__file__).resolve().parents[1] / "fixtures" / "raw_base.csv").read_bytes()
    (tmp_path / "in.csv").write_bytes(source)
    (tmp_path / "alias.csv").symlink_to("in.csv")
    for argv in (["in.csv", "-o", "in.csv"], ["alias.csv", "-o", "in.csv"], [".", "-o", "alias.csv"]):
        done = run_cli("analyze", *argv, cwd=tmp_path)
        assert done.returncode == 2, argv
        assert "is an input of this run" in done.stderr and "hint: name another output file" in done.stderr
        assert (tmp_path / "in.csv").read_bytes() == source
    with pytest.raises(UsageError, match=r"in\.csv is an input of this run"):
        output.refuse_inputs([str(tmp_path / "in.csv")], [str(tmp_path / "alias.csv")])


def test_an_output_under_a_file_or_a_missing_folder_says_which(tmp_path: Path) -> None:
    (tmp_path / "t4.ncu-rep").write_bytes(b"NVR")  # it said "directory …t4.ncu-rep does not exist"
    for folder, problem in (("t4.ncu-rep", "is a file"), ("nowhere", "does not exist")):
        with pytest.raises(OutputError, match=rf"{folder} {problem}$"):
            output.check_writable(str(tmp_path / folder / "x.json"))


def test_a_diff_output_naming_one_of_its_inputs_is_refused_before_either_is_read(tmp_path: Path) -> None:
    from conftest import run_cli

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    (tmp_path / "base.md").write_bytes((fixtures / "raw_base.csv").read_bytes())  # a CSV, named .md
    done = run_cli("diff", "base.md", str(fixtures / "raw_base_en_US.csv"), "-o", "base.md", cwd=tmp_path)
    assert done.returncode == 2
    assert "base.md is an input of this run" in done.stderr and "read " not in done.stderr
    assert (tmp_path / "base.md").read_bytes() == (fixtures / "raw_base.csv").read_bytes()
    done = run_cli("diff", "base.md", "base.md", "--format", "table", "-o", "out.csv", cwd=tmp_path)
    assert "error: diff cannot write -o out.csv (its suffix says csv)" in done.stderr
    assert (  # the hint names what it can write
        "hint: name a .txt, .md or .json file (table, markdown, json)" in done.stderr and done.returncode == 2
    )


def test_a_full_disk_while_staging_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(handle: IO[bytes], data: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # no file name, as a failed write has

    monkeypatch.setattr(output, "_write_pieces", full)
    with pytest.raises(OutputError, match=rf"cannot write {tmp_path / 'out.json'}: No space left on device"):
        write_all([("{}", str(tmp_path / "out.json"))])
    assert list(tmp_path.iterdir()) == []  # the staged temporary file removed


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("at", [0, 1])  # while the first output is staged, or the second
def test_a_stopping_signal_while_outputs_are_written_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals, at: int
) -> None:
    from conftest import run_cli

    written = output._write_pieces
    calls: list[int] = []

    def stopped_half_way(handle: IO[bytes], data: output.Document) -> None:
        calls.append(1)
        if len(calls) > at:
            handle.write(b'{"half": ')
            handle.flush()
            os.kill(os.getpid(), sig)
            time.sleep(5)  # the handler raises first
        written(handle, data)

    monkeypatch.setattr(output, "_write_pieces", stopped_half_way)
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "raw_base.csv"
    done = run_cli("analyze", str(fixture), "-o", "out.json", "--plot", "roof.svg", cwd=tmp_path)
    assert done.returncode == 128 + sig, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_json_to_a_stdout_of_text_only_is_written_as_text() -> None:
    # a notebook or a caller may replace stdout by a text stream without `.buffer`: the JSON's
    # pieces (Polars' bytes among them) are joined and written as text there, not an error
    import contextlib
    import io
    import json

    from ncu_roof.cli import main

    captured = io.StringIO()
    with (
        contextlib.redirect_stdout(captured),
        contextlib.redirect_stderr(io.StringIO()),
        pytest.raises(SystemExit) as leaving,
    ):
        main(["analyze", "--example", "-F", "json"])
    assert leaving.value.code == 0
    assert len(json.loads(captured.getvalue())["kernels"]) == 7


def test_an_empty_plot_path_draws_no_plot(tmp_path: Path) -> None:
    """`--plot ""` is no plot, as it always was (not `.: is a directory`)."""
    from conftest import run_cli

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "raw_base.csv"
    done = run_cli("analyze", str(fixture), "--plot", "", "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    markdown = run_cli("analyze", str(fixture), "--plot", "", "-F", "markdown", cwd=tmp_path).stdout
    assert "## Roofline" in markdown and "Plot:" not in markdown  # no link to a plot not drawn


def test_an_output_and_a_plot_that_name_one_file_are_refused_before_any_work(tmp_path: Path) -> None:
    """`-o x.svg --plot ./x.svg` wrote the file twice, the last write winning, without a word."""
    from conftest import run_cli

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "raw_base.csv"
    done = run_cli("analyze", str(fixture), "-o", "x.svg", "--plot", "./x.svg", cwd=tmp_path)
    assert done.returncode == 2
    error = "error: -o and --plot both name ./x.svg: one output would replace the other\n"
    assert done.stderr == error + "hint: name two files\n"
    assert list(tmp_path.iterdir()) == []


def test_an_empty_plot_path_draws_no_plot_in_a_diff_either(tmp_path: Path) -> None:
    """`diff --plot ""` is no plot, as in analyze (it was `.: is a directory`, exit 1)."""
    from conftest import run_cli

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "raw_base.csv"
    done = run_cli("diff", str(fixture), str(fixture), "--plot", "", "-o", "d.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json"]
