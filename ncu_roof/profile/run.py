"""Running ncu: the only functions that start a process, and the whole `profile` flow. The target
is checked first; ncu writes a private temporary report in a folder beside it, moved into place
with one rename only when the project's reader loads a kernel from it (`check_report`): an
earlier report is never replaced by a failed, empty or damaged one."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ncu_roof.base.ncu import NcuTool, c_locale_env, import_raw_csv
from ncu_roof.base.stop import held
from ncu_roof.errors import (
    BadInputError,
    MissingToolError,
    NcuRoofError,
    OutputError,
    ProfileError,
    UsageError,
)
from ncu_roof.profile.progress import (
    REPORT_SUFFIX,
    SPOKEN_FOR,
    TOOL_PREFIXES,
    KernelProgress,
    ProfileOptions,
    ProgressSink,
    RunOutcome,
    build_argv,
    csv_path,
    damaged_report_error,
    diagnose,
    parse_progress,
    report_path,
)

if TYPE_CHECKING:
    from ncu_roof.ingest.table import RunTable


# What `profile` keeps of ncu's output, however much it prints (a flood of progress or program
# output costs no memory): the last tool lines, the first launches' progress, a line's first bytes.
MAX_TOOL_LINES = 10_000
MAX_KERNELS = 100_000
MAX_LINE_BYTES = 1 << 16


@dataclass
class _Reader:
    """Splits ncu's merged output: tool lines kept (the last `MAX_TOOL_LINES`), the program's passed on."""

    sink: ProgressSink
    tool_lines: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_TOOL_LINES))
    kernels: list[KernelProgress] = field(default_factory=list)

    def feed(self, chunks: Iterable[bytes]) -> None:
        """Read the stream to its end; a growing progress line is shown before its newline, a
        line longer than `MAX_LINE_BYTES` is taken in pieces of that size."""
        pending = b""
        for chunk in chunks:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                self.line(raw.decode("utf-8", "replace") + "\n")
            if len(pending) > MAX_LINE_BYTES:  # no line end in sight: what came so far goes on
                self.line(pending.decode("utf-8", "replace"))
                pending = b""
            if pending.startswith(b"==PROF== Profiling"):
                partial = parse_progress(pending.decode("utf-8", "replace"))
                if partial is not None and not partial.done:  # done: counted at its newline
                    self.sink.kernel(partial)
        if pending:
            self.line(pending.decode("utf-8", "replace"))

    def line(self, text: str) -> None:
        """One whole line: the program's output is passed on, ncu's lines kept (and shown)."""
        if not text.startswith(TOOL_PREFIXES):
            self.sink.passthrough(text)
            return
        self.tool_lines.append(text.rstrip("\r\n")[:MAX_LINE_BYTES])
        if (progress := parse_progress(text)) is not None:
            if len(self.kernels) < MAX_KERNELS:
                self.kernels.append(progress)
            self.sink.kernel(progress)
        elif text.startswith("==WARNING==") and not SPOKEN_FOR.search(text):
            self.sink.passthrough(text)


def _group_runs(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs: not a zombie (an orphan's waits for init, which
    may reap it late or never) unless its threads run on; without a /proc of this PID namespace,
    `kill(-pgid, 0)`, which counts zombies."""
    with contextlib.suppress(OSError):
        if os.readlink("/proc/self") == str(os.getpid()):
            return any(map(partial(_runs_in, b"%d" % pgid), Path("/proc").glob("[0-9]*/stat")))
    os.killpg(pgid, 0)  # ProcessLookupError: the group is gone
    return True


def _runs_in(group: bytes, stat: Path) -> bool:  # (bytes: a process' name is any bytes)
    with contextlib.suppress(OSError, IndexError):  # gone meanwhile: not running
        state, _, of = stat.read_bytes().rsplit(b")", 1)[1].split()[:3]
        return of == group and (state not in (b"Z", b"X") or len(os.listdir(stat.parent / "task")) > 1)
    return False


def _kill_group(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM the process group (ncu, the program, its children), SIGKILL once none of it runs or after
    `grace_s` (a zombie keeps the group's number from reuse); every wait is bounded (Ctrl-C is held)."""
    deadline = time.monotonic() + grace_s
    try:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
            while time.monotonic() < deadline and _group_runs(proc.pid):
                proc.poll()  # ncu reaped
                time.sleep(0.05)
    finally:  # (whatever was raised stays raised)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)


def run_ncu(
    argv: list[str], report: Path, sink: ProgressSink, timeout_s: float | None, kill_after_s: float = 5.0
) -> RunOutcome:
    """Run ncu in its own process group; Ctrl-C and the timeout kill the group (no half report),
    SIGKILLed `kill_after_s` after its SIGTERM at the latest."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=c_locale_env(), start_new_session=True
    )
    assert proc.stdout is not None
    stdout, reader = proc.stdout, _Reader(sink)
    # bytes as ncu writes them, so that the replay dots show before the line ends (the stream asked
    # for its descriptor each time: once closed, never a number reused by another file)
    chunks = iter(lambda: os.read(stdout.fileno(), 65536), b"")
    thread = threading.Thread(target=reader.feed, args=(chunks,), daemon=True)
    thread.start()
    try:
        returncode = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc, kill_after_s)
        raise ProfileError(
            f"ncu timed out after {timeout_s:g} s (killed it and the program)",
            hint="profile fewer launches (-k regex:NAME, -c N), try --fast, or raise --timeout",
        ) from None
    except BaseException:  # Ctrl-C, SIGTERM, SIGHUP: the group goes, the folder with the half report
        with held():
            _kill_group(proc, kill_after_s)
        raise
    finally:
        thread.join(timeout=5)
        stdout.close()
        sink.close()
    return RunOutcome(
        returncode=returncode,
        tool_lines=tuple(reader.tool_lines),
        kernels=tuple(k for k in reader.kernels if k.done),
        report=report if report.is_file() else None,
        elapsed_s=time.monotonic() - started,
    )


def resolve_program(name: str) -> Path:
    """The absolute path of the program to profile, checked before ncu is started."""
    if os.sep in name:
        path = Path(name).absolute()
    else:
        if (found := shutil.which(name)) is None:
            raise UsageError(f"{name}: program not found on PATH", hint="give its path, e.g. ./" + name)
        path = Path(found)
    if not path.exists():
        raise UsageError(f"{name}: program not found", hint="check the path of the program to profile")
    if not path.is_file() or not os.access(path, os.X_OK):
        raise UsageError(
            f"{name}: not an executable file",
            hint=f"`chmod +x {name}`, or run it through its interpreter (`-- python {name}`)",
        )
    return path


WRITE_HINT = "check that you may write there, or choose another -o"


def prepare_target(targets: list[Path], force: bool) -> None:
    """Refuse to replace an existing file without `force` (as ncu does), and create the folder:
    before ncu runs, as a profile is too slow to throw away over an output path."""
    for target in targets:
        if target.is_dir():
            raise OutputError(f"cannot write {target}: is a directory", hint="choose another -o")
        if target.exists() and not force:
            raise OutputError(
                f"{target} already exists", hint="pass -f/--force to replace it, or choose another -o"
            )
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(
                f"cannot write {target}: cannot create {target.parent} ({err.strerror or err})",
                hint=WRITE_HINT,
            ) from None


def check_report(
    report: Path, tool: NcuTool, outcome: RunOutcome, target: Path
) -> tuple[int, RunTable | None, bytes | None]:
    """The temporary report's launch count, the report as read (None: nothing here reads it) and its raw page
    where `ncu --import` read it (for `--csv`: neither made twice), or `damaged_report_error` raised, the
    target untouched. ncu's exit code alone cannot decide (a crashing program makes ncu exit non-zero after a
    good report; a killed or failing ncu can leave a truncated one): `analyze`'s reader does (a damaged one
    raises), `ncu --import` (no `ncu_report`) run by `tool`, the ncu that wrote it, not the first on PATH."""
    from ncu_roof.ingest import mapped, read_input
    from ncu_roof.ingest.rep import ncu_report_installed, read_with_cli

    page = None
    try:
        if ncu_report_installed():
            table = read_input(str(report))
        else:
            page = import_raw_csv(tool, report)
            with mapped(str(report)) as raw:  # its header and version only: never read whole
                table = read_with_cli(str(report), raw, page)
    except MissingToolError:  # no ncu_report and ncu cannot run: ncu's exit code must do
        if outcome.returncode == 0 or outcome.app_exit_code is not None:
            return len(outcome.kernels), None, None
        problem = "nothing here can read it (no ncu_report, and ncu does not run)"
    except NcuRoofError as err:
        problem = err.message.removeprefix(f"{report}: ")
    else:
        if table.rows:
            return table.rows, table, page
        problem = "the report holds no profiled kernel"
    kept = f"{target} was left as it was" if target.exists() else "no report was written"
    raise damaged_report_error(outcome, problem, kept)


def export_csv(tool: NcuTool, report: Path) -> bytes:
    """The raw page of a report as CSV, base units, C locale."""
    try:
        return import_raw_csv(tool, report)
    except BadInputError as err:
        raise ProfileError(
            err.message.replace("`ncu --import`", "`ncu --import --csv`", 1),
            hint="the report is kept; export it later with `ncu --import REPORT --csv --page raw`",
        ) from None


@dataclass(frozen=True)
class ProfileResult:
    """A published report: where it is, what it holds, and what the run said."""

    report: Path
    kernels: int  # launches in the report (what ncu's progress lines said, when it cannot be read)
    table: RunTable | None  # the published report as read by the check (None when it could not be)
    outcome: RunOutcome  # the program's exit code, how long ncu ran
    csv: bytes | None


def run_profile(
    tool: NcuTool, options: ProfileOptions, sink: ProgressSink, log: Callable[[str], None] | None = None
) -> ProfileResult:
    """Resolve the program, run ncu in a private folder, publish the report or raise a diagnosis.
    The target is checked first (`prepare_target`); `log` is told the ncu command line (`--verbose`)."""
    program = resolve_program(options.program[0])
    target = report_path(options.output)
    prepare_target([target, csv_path(target)] if options.csv else [target], options.force)
    try:  # a private folder beside the output: the same file system, so the final rename is atomic
        private = tempfile.TemporaryDirectory(
            prefix=".ncu-roof-", dir=target.absolute().parent, ignore_cleanup_errors=True
        )
    except OSError as err:
        raise OutputError(
            f"cannot write {target.absolute()}: {err.strerror or err}", hint=WRITE_HINT
        ) from None
    with private as work:
        export_base = Path(work) / "report"
        argv = build_argv(tool, options, program, export_base)
        if log is not None:
            log(f"running: {shlex.join(argv)}")
        outcome = run_ncu(
            argv, export_base.with_suffix(REPORT_SUFFIX), sink, options.timeout_s, options.kill_after_s
        )
        report = diagnose(outcome, options)
        launches, table, page = check_report(report, tool, outcome, target)
        os.replace(report, target)  # the report moved into place, atomic: the same file system
    csv = (page or export_csv(tool, target)) if options.csv else None
    table = None if table is None else replace(table, path=str(target))
    return ProfileResult(report=target, kernels=launches, table=table, outcome=outcome, csv=csv)
