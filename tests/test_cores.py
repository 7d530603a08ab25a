"""Work on a second core: a forked child's bytes come back whole or not at all, and reading a lone
input ahead gives exactly what reading it here gives (its errors included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest
from conftest import CORPUS, run_cli

from ncu_roof import cores
from ncu_roof.errors import BadInputError
from ncu_roof.ingest import ahead as ahead_module
from ncu_roof.ingest import read_input, reprows
from ncu_roof.ingest.ahead import read_ahead

needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")


@pytest.fixture(autouse=True)
def _alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist may run threads of its own in a worker; the children here start none."""
    monkeypatch.setattr(cores, "alone", lambda: True)


REPORT = CORPUS / "a10g_rep_2023.1.1_roofline-set.ncu-rep"


@needs_fork
def test_a_child_s_bytes_come_back_whole() -> None:
    payload = "ünïcode %s, 100% \n".encode() * 50_000  # more than a pipe would hold

    child = cores.start(lambda out: out.write(payload))
    assert child is not None
    made = child.result()
    assert made is not None and made.read() == payload


@needs_fork
def test_a_failing_child_gives_none(capfd: pytest.CaptureFixture[str]) -> None:
    def fail(out: IO[bytes]) -> None:
        out.write(b"half")
        raise RuntimeError("boom")

    child = cores.start(fail)
    assert child is not None and child.result() is None
    assert capfd.readouterr().err == ""  # the child's failure is not the user's to read


@needs_fork
def test_a_cancelled_child_is_stopped() -> None:
    child = cores.start(lambda out: time.sleep(60))
    assert child is not None
    started = time.monotonic()
    child.close()
    assert time.monotonic() - started < 5


def test_no_child_starts_beside_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child would inherit the locks another thread holds (an import's, say)."""
    monkeypatch.undo()  # the real `alone`
    with_thread = cores.on_thread(lambda: time.sleep(0.5))
    assert not cores.alone() and cores.start(lambda out: out.write(b"x")) is None
    with_thread.result()


def test_a_thread_s_result_and_error_come_back() -> None:
    assert cores.on_thread(lambda: 6 * 7).result() == 42
    failing = cores.on_thread(lambda: 1 // 0)
    with pytest.raises(ZeroDivisionError):
        failing.result()


TEXT_INPUTS = ["raw_base.csv", "raw_nvtx.csv", "console_details_2024.txt", "details_rules_20col.csv"]


@pytest.mark.parametrize("name", TEXT_INPUTS)
def test_a_text_input_read_ahead_is_the_same_table(fixtures: Path, name: str) -> None:
    path = str(fixtures / name)
    ahead = read_ahead(path)
    assert ahead is not None
    here, there = read_input(path), read_input(path, ahead=ahead)
    assert here.frame.equals(there.frame) and here.warnings == there.warnings


def test_an_input_read_ahead_fails_as_it_would_here(tmp_path: Path, fixtures: Path) -> None:
    missing = str(tmp_path / "gone.csv")
    assert read_ahead(missing) is None  # its reader says why
    with pytest.raises(BadInputError, match="no such file"):
        read_input(missing, ahead=read_ahead(missing))
    assert read_ahead("-") is None  # stdin is read once, by its reader
    empty = str(fixtures / "empty.csv")
    with pytest.raises(BadInputError) as here:
        read_input(empty)
    with pytest.raises(BadInputError) as there:
        read_input(empty, ahead=read_ahead(empty))
    assert str(there.value) == str(here.value)


def test_a_text_read_s_error_is_raised_by_the_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.csv"
    path.write_text("x\n")
    monkeypatch.setattr(ahead_module, "read_text_bytes", _refuse)
    ahead = read_ahead(str(path))
    assert ahead is not None
    with pytest.raises(BadInputError, match="refused"):
        read_input(str(path), ahead=ahead)


def _refuse(path: str) -> bytes:
    raise BadInputError(f"{path}: refused", hint="a hint")


@needs_fork
def test_a_report_read_ahead_is_the_same_table(corpus: Path) -> None:
    pytest.importorskip("ncu_report")
    ahead = read_ahead(str(REPORT))
    assert ahead is not None
    try:
        here, there = read_input(str(REPORT)), read_input(str(REPORT), ahead=ahead)
    finally:
        ahead.close()
    assert here.frame.equals(there.frame) and here.ncu_version == there.ncu_version


@needs_fork
def test_a_report_whose_child_fails_is_read_here(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ncu_report")
    monkeypatch.setattr(ahead_module, "report_rows", _fail)  # the child's reader; `rep` keeps its own
    ahead = read_ahead(str(REPORT))
    assert ahead is not None and ahead.rows() is None
    assert read_input(str(REPORT), ahead=ahead).rows == read_input(str(REPORT)).rows
    ahead.close()


def _fail(path: str) -> list[reprows.Row] | None:
    raise RuntimeError(f"{path}: the child fails")


def test_reading_ahead_loads_no_numpy(fixtures: Path) -> None:
    """The point of reading ahead: it starts before numpy, pyarrow and the analysis load."""
    probe = (
        "import json, sys\n"
        "from ncu_roof.ingest import expand_inputs\n"
        "from ncu_roof.ingest.ahead import read_ahead\n"
        f"paths = expand_inputs([{str(fixtures / 'raw_base.csv')!r}]).paths\n"
        "assert read_ahead(paths[0]).text()\n"
        "print(json.dumps(sorted({'numpy', 'pyarrow', 'pandas'} & sys.modules.keys())))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


@pytest.mark.parametrize(("name", "loaded"), [("text", True), ("report", False)])
def test_a_text_s_reader_modules_load_while_it_is_read(fixtures: Path, name: str, loaded: bool) -> None:
    """pyarrow's CSV parser and compute functions are loaded by the pipeline while a text input is
    read ahead, before its reader runs (not for a report: its reader needs neither)."""
    path = fixtures / "raw_base.csv" if name == "text" else REPORT
    if not path.exists():
        pytest.skip(f"{path} not found")
    probe = (
        "import json, sys\n"
        "from ncu_roof import ingest, pipeline\n"
        "from ncu_roof.ingest.ahead import TEXT_READER_MODULES\n"
        "read = ingest.read_input\n"
        "def watched(*args, **kwargs):\n"
        "    print(json.dumps(all(m in sys.modules for m in TEXT_READER_MODULES)))\n"
        "    return read(*args, **kwargs)\n"
        "ingest.read_input = watched\n"
        f"pipeline.run([{str(path)!r}])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.splitlines()[0]) is loaded


def test_an_interrupted_wait_leaves_the_thread_to_finish(tmp_path: Path) -> None:
    """Ctrl-C while waiting for a thread: the interpreter still waits for the thread before it
    exits (a `join` that Ctrl-C interrupts marks it stopped, and the C library it runs in, pyarrow,
    was torn down under it: a segfault instead of exit 130)."""
    done = tmp_path / "done"
    probe = (
        "import signal, sys, time\n"
        "from ncu_roof import cores\n"
        "def interrupt(*_):\n    raise KeyboardInterrupt\n"
        "signal.signal(signal.SIGALRM, interrupt)\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.2)\n"
        f"work = cores.on_thread(lambda: (time.sleep(1), open({str(done)!r}, 'w').close()))\n"
        "work.result()\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "KeyboardInterrupt" in ran.stderr and ran.returncode != 0
    assert done.exists()


@needs_fork
def test_a_child_works_while_sigchld_is_ignored() -> None:
    """A parent process may leave SIGCHLD ignored: no child's exit status can then be collected,
    so a child says it is done through a pipe, not through its exit."""
    import signal

    saved = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        child = cores.start(lambda out: out.write(b"x"))
        assert child is not None
        made = child.result()
        assert made is not None and made.read() == b"x"
        child.close()
        failing = cores.start(_raise)
        assert failing is not None and failing.result() is None
    finally:
        signal.signal(signal.SIGCHLD, saved)


def _raise(out: IO[bytes]) -> None:
    raise RuntimeError("the child fails")


def _ignore_sigchld_and_close_stdout() -> None:
    import os
    import signal

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # inherited across exec, as from some supervisors
    os.close(1)


@needs_fork
def test_a_report_is_read_with_sigchld_ignored_and_stdout_closed(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("ncu_report")
    out = tmp_path / "run.json"
    for setup in (_ignore_sigchld_and_close_stdout, lambda: os.close(1)):
        ran = subprocess.run(
            [sys.executable, "-m", "ncu_roof", "analyze", str(REPORT), "-o", str(out)],
            capture_output=False,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=setup,
            timeout=120,
        )
        assert ran.returncode == 0, ran.stderr
        assert len(json.loads(out.read_text())["kernels"]) == 4


def test_usage_errors_come_before_the_inputs(tmp_path: Path) -> None:
    """`--gpu` is checked before the inputs are expanded and read ahead (exit 2, not 3)."""
    done = run_cli("analyze", str(tmp_path / "nothing*.csv"), "--gpu", "bogus")
    assert done.returncode == 2 and "unknown GPU" in done.stderr and "no file matches" not in done.stderr


def test_a_non_report_is_not_read_ahead(tmp_path: Path, fixtures: Path) -> None:
    """A `.ncu-rep` without the report header is refused by its reader: no child reads it."""
    fake = tmp_path / "fake.ncu-rep"
    fake.write_bytes(b"\x00garbage" * 100)
    assert read_ahead(str(fake)) is None
    other = read_ahead(str(fixtures / "raw_base.csv"))
    assert other is not None  # read ahead for another input: ignored by this one's reader
    assert (
        read_input(str(fixtures / "raw_nvtx.csv"), ahead=other).rows
        == read_input(str(fixtures / "raw_nvtx.csv")).rows
    )


@needs_fork
def test_a_child_that_said_it_is_done_is_reaped() -> None:
    """Not waited for when closed (it may still be ending), but reaped by a later `close` or at
    exit: never a zombie left to init."""
    child = cores.start(lambda out: out.write(b"x"))
    assert child is not None and child.result() is not None
    child.close()
    cores._reap_all()  # what exit runs
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)


@needs_fork
def test_analyze_of_a_report_read_ahead_is_the_analysis_read_here(corpus: Path) -> None:
    """`ncu-roof analyze REPORT` (its launches read by a child) prints what an analysis of the
    report read in this process renders."""
    pytest.importorskip("ncu_report")
    from ncu_roof.analysis import analyze
    from ncu_roof.render.jsonout import render_json

    done = run_cli("analyze", str(REPORT), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert done.stdout == render_json(analyze([read_input(str(REPORT))]))


@needs_fork
def test_a_child_whose_wait_was_interrupted_is_stopped() -> None:
    """Ctrl-C while waiting for the child's word: it has said nothing, so closing stops it (it
    is not left to run to its end, nor waited for at exit)."""
    import signal

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    child = cores.start(lambda out: time.sleep(60))
    assert child is not None
    saved = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            child.result()
    finally:
        signal.signal(signal.SIGALRM, saved)
    started = time.monotonic()
    child.close()
    assert time.monotonic() - started < 5
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # stopped and reaped


@pytest.mark.parametrize(("user", "seen"), [(None, "1 None"), ("3", "3 3")])
def test_one_blas_thread_is_not_passed_on_to_programs(user: str | None, seen: str) -> None:
    """The CLI runs OpenBLAS with one thread; ncu and the profiled program get the user's
    environment: without the variable, or with the user's own value."""
    probe = (
        "import os\n"
        "from ncu_roof import cores, ncu\n"
        "cores.one_blas_thread()\n"
        "import numpy\n"
        "print(os.environ.get(cores.BLAS_THREADS), ncu.c_locale_env().get(cores.BLAS_THREADS))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != cores.BLAS_THREADS}
    if user is not None:
        env[cores.BLAS_THREADS] = user
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == seen.split()
