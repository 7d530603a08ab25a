"""`ncu-roof profile`: build the ncu command, run it safely, follow its progress, diagnose failures.

Pure parts (argv, progress parsing, diagnosis) are separate from `run_ncu`, the only function that
starts a process. ncu writes to a private temporary report which `publish_report` moves into place
only when the project's own reader loads at least one kernel from it (`check_report`), so an
earlier report is never replaced by a failed, empty or damaged one.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

from ncu_roof.errors import BadInputError, MissingToolError, NcuRoofError, ProfileError, UsageError
from ncu_roof.ncu import INSTALL_HINT, NcuTool, c_locale_env, import_raw_csv, version_tuple
from ncu_roof.recipe import COLLECT
from ncu_roof.render.text import one_line

if TYPE_CHECKING:
    from ncu_roof.ingest.table import RunTable

ROOFLINE_SECTIONS = tuple(
    f"SpeedOfLight_Hierarchical{kind}RooflineChart" for kind in ("Double", "Single", "Half", "Tensor")
)
REPORT_SUFFIX = ".ncu-rep"
ANALYZE_ANYWHERE = "profile where you can, analyze anywhere: `ncu-roof analyze REPORT.ncu-rep` needs no GPU"


@dataclass(frozen=True)
class ProfileOptions:
    """What the user asked for; `program` is the command line of the profiled application."""

    program: tuple[str, ...]
    output: str = "report"
    fast: bool = False
    kernel_name: str | None = None
    launch_count: int | None = None
    launch_skip: int | None = None
    nvtx: bool = False
    nvtx_include: tuple[str, ...] = ()
    target_processes: str = "all"
    replay_mode: str | None = None
    clock_control: str | None = None
    cache_control: str | None = None
    ncu_args: tuple[str, ...] = ()
    csv: bool = False
    timeout_s: float | None = None


# --- the command line -------------------------------------------------------------------------


def supports_config_file(version: str | None) -> bool:
    """`--config-file` exists from 2023.1 on; 2022.3 rejects it as an unknown option."""
    return version_tuple(version) >= (2023, 1)


MIN_VERSION = (2020, 1)  # `ncu` got its name and the roofline metrics/sections in 2020.1
REGEX_FILTER_VERSION = (2021, 1)  # `-k regex:…` (before: --kernel-regex)


def check_version(version: str | None, options: ProfileOptions) -> None:
    """Refuse an ncu that cannot do what was asked, saying why (unknown versions are trusted)."""
    found = version_tuple(version)
    if found < MIN_VERSION:
        raise MissingToolError(
            f"Nsight Compute {version} is too old: ncu-roof needs 2020.1 or newer "
            "(the `ncu` CLI and the roofline metrics arrived in 2020.1)",
            hint=INSTALL_HINT,
        )
    if options.kernel_name and options.kernel_name.startswith("regex:") and found < REGEX_FILTER_VERSION:
        raise MissingToolError(
            f"Nsight Compute {version} does not understand `-k regex:…` (added in 2021.1)",
            hint="pass a plain kernel name, or install a newer Nsight Compute",
        )


def fast_metrics() -> tuple[str, ...]:
    """The recipe's minimal metric list (`recipe.COLLECT`, every part), sorted and unique."""
    return tuple(sorted({name for names in COLLECT.values() for name in names}))


def collection_args(fast: bool) -> list[str]:
    """`--set full` plus the hierarchical roofline sections (not in `full`), or only the recipe."""
    if fast:
        return ["--metrics", ",".join(fast_metrics())]
    args = ["--set", "full"]
    for section in ROOFLINE_SECTIONS:
        args += ["--section", section]
    return args


def filter_args(options: ProfileOptions) -> list[str]:
    """The pass-through filters, in ncu's spelling."""
    args: list[str] = ["--target-processes", options.target_processes]
    pairs = (
        ("--kernel-name", options.kernel_name),
        ("--launch-count", options.launch_count),
        ("--launch-skip", options.launch_skip),
        ("--replay-mode", options.replay_mode),
        ("--clock-control", options.clock_control),
        ("--cache-control", options.cache_control),
    )
    for flag, value in pairs:
        if value is not None:
            args += [flag, str(value)]
    if options.nvtx or options.nvtx_include:
        args.append("--nvtx")
    for include in options.nvtx_include:
        args += ["--nvtx-include", include]
    return args


def build_argv(tool: NcuTool, options: ProfileOptions, program: Path, export_base: Path) -> list[str]:
    """The full ncu argv (no shell). `program` is the resolved absolute path of the application."""
    argv = [tool.path]
    if supports_config_file(tool.version):
        argv += ["--config-file", "off"]
    argv += collection_args(options.fast)
    argv += filter_args(options)
    argv += list(options.ncu_args)
    argv += ["-f", "-o", str(export_base)]
    return [*argv, str(program), *options.program[1:]]


def resolve_program(name: str) -> Path:
    """The absolute path of the program to profile, checked before ncu is started."""
    if os.sep in name:
        path = Path(name).absolute()
    else:
        found = shutil.which(name)
        if found is None:
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


# --- progress ----------------------------------------------------------------------------------

_PROGRESS = re.compile(
    r'^==PROF== Profiling "(?P<name>.*)"(?: - (?P<id>\d+))?: (?P<bar>[0-9%.]*)'
    r"(?:\s*-\s*(?P<passes>\d+) pass(?:es)?)?\s*$"
)
_APP_ERROR = re.compile(r"The application returned an error code \((?P<code>-?\d+)\)")
_TOOL_PREFIXES = ("==PROF==", "==WARNING==", "==ERROR==")


@dataclass(frozen=True)
class KernelProgress:
    """One `==PROF== Profiling` line; `passes` is None while the kernel is still being replayed."""

    name: str
    result_id: int | None
    percent: int
    passes: int | None

    @property
    def done(self) -> bool:
        return self.passes is not None


def parse_progress(line: str) -> KernelProgress | None:
    """Parse a (possibly still growing) progress line, old (`"name": 0%…`) or new (`- 3: 0%…`)."""
    match = _PROGRESS.match(line.rstrip("\r\n"))
    if match is None:
        return None
    percents = re.findall(r"(\d+)%", match["bar"])
    passes = match["passes"]
    return KernelProgress(
        name=match["name"],
        result_id=int(match["id"]) if match["id"] is not None else None,
        percent=int(percents[-1]) if percents else 0,
        passes=int(passes) if passes is not None else None,
    )


def is_tool_line(line: str) -> bool:
    return line.startswith(_TOOL_PREFIXES)


def describe(progress: KernelProgress) -> str:
    """`name (37 passes)`, on one line whatever the kernel name holds."""
    plural = "pass" if progress.passes == 1 else "passes"
    return f"{one_line(progress.name)} ({progress.passes} {plural})"


class ProgressSink(Protocol):
    def kernel(self, progress: KernelProgress) -> None: ...

    def passthrough(self, text: str) -> None: ...

    def close(self) -> None: ...


class PlainProgress:
    """One line per profiled kernel, for logs and pipes (stderr is not a TTY, or NO_COLOR)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.count = 0

    def kernel(self, progress: KernelProgress) -> None:
        if not progress.done:
            return
        self.count += 1
        self.stream.write(f"ncu-roof: kernel {self.count} profiled: {describe(progress)}\n")
        self.stream.flush()

    def passthrough(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()


class RichProgress:
    """A live status line on stderr: the kernel being replayed, its percentage, kernels done."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True, highlight=False)
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self.task = self.progress.add_task("starting ncu…", total=None)
        self.count = 0
        self.progress.start()

    def kernel(self, progress: KernelProgress) -> None:
        from rich.text import Text

        name = one_line(progress.name)
        if progress.done:
            self.count += 1
            self.console.print(Text(f"✓ {describe(progress)}"))
            self.progress.update(self.task, description=f"{self.count} kernels profiled")
        else:
            self.progress.update(
                self.task, description=f"{self.count} done · profiling {name} {progress.percent}%"
            )

    def passthrough(self, text: str) -> None:
        from rich.text import Text

        self.console.print(Text(text.rstrip("\n")), soft_wrap=True)

    def close(self) -> None:
        self.progress.stop()


def progress_sink(stream: IO[str] | None = None) -> ProgressSink:
    """Rich on an interactive stderr, plain lines otherwise (and always under NO_COLOR)."""
    out = stream if stream is not None else sys.stderr
    if out.isatty() and not os.environ.get("NO_COLOR"):
        return RichProgress()
    return PlainProgress(out)


# --- diagnosis ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Diagnosis:
    pattern: re.Pattern[str]
    message: str
    hint: str


DIAGNOSES = (
    Diagnosis(
        re.compile(r"ERR_NVGPUCTRPERM"),
        "no permission to read the GPU performance counters (ERR_NVGPUCTRPERM)",
        "run as root, or have an admin set `options nvidia NVreg_RestrictProfilingToAdminUsers=0` "
        "and reload the driver; in a container add `--cap-add SYS_ADMIN`; or " + ANALYZE_ANYWHERE,
    ),
    Diagnosis(
        re.compile(r"failed to connect to the CUDA driver|LibraryNotLoaded", re.IGNORECASE),
        "ncu could not reach a CUDA driver: no NVIDIA GPU or driver on this machine",
        "run on a machine with an NVIDIA GPU and driver (check `nvidia-smi`; a stub libcuda.so on "
        "LD_LIBRARY_PATH also causes this); " + ANALYZE_ANYWHERE,
    ),
    Diagnosis(
        re.compile(r"unsupported (gpu|chip|device)|(gpu|chip|device) is not supported", re.IGNORECASE),
        "this ncu does not support the GPU",
        "install a newer Nsight Compute (new GPUs need a recent release); pass it with --ncu PATH",
    ),
    Diagnosis(
        re.compile(r"driver resource was unavailable"),
        "another tool holds the GPU's profiling counters",
        "stop it first (DCGM: `dcgmi profile --pause`; or another ncu/CUPTI client), then retry",
    ),
    Diagnosis(
        re.compile(r"Cannot lock GPU clock frequencies on MIG"),
        "ncu cannot lock clocks on a MIG instance",
        "add `--clock-control none` (lock clocks with `nvidia-smi --lock-gpu-clocks` if you can)",
    ),
    Diagnosis(
        re.compile(r"does not exist or is not an executable"),
        "ncu could not start the program",
        "give the program's path (`./app`), and make sure it is executable",
    ),
)

NO_KERNELS = re.compile(r"No kernels were profiled")
_DIAGNOSED_WARNING = re.compile(r"No kernels were profiled|launched by child processes requires")


@dataclass(frozen=True)
class RunOutcome:
    """What one ncu run left: its exit code, its tool lines, progress, and the report if any."""

    returncode: int
    tool_lines: tuple[str, ...]
    kernels: tuple[KernelProgress, ...]
    report: Path | None
    elapsed_s: float = 0.0

    @property
    def app_exit_code(self) -> int | None:
        codes = [m["code"] for line in self.tool_lines for m in [_APP_ERROR.search(line)] if m]
        return int(codes[-1]) if codes else None

    @property
    def no_kernels(self) -> bool:
        return any(NO_KERNELS.search(line) for line in self.tool_lines)

    @property
    def profiled(self) -> bool:
        """A report worth keeping: written, and ncu did not say that nothing was profiled."""
        return self.report is not None and not self.no_kernels


def no_kernels_hint(options: ProfileOptions) -> str:
    used = filter_args(options)[2:]
    shown = " ".join(used) if used else "none"
    hint = f"check the filters (used: {shown}) and that the program launches CUDA kernels"
    if options.target_processes != "all":
        hint += "; kernels of child processes need --target-processes all"
    return hint


def last_error_line(outcome: RunOutcome) -> str | None:
    """ncu's last `==ERROR==` line, without the prefix."""
    errors = [
        line.removeprefix("==ERROR==").strip() for line in outcome.tool_lines if line.startswith("==ERROR==")
    ]
    return errors[-1] if errors else None


VERBOSE_HINT = "rerun with --ncu-args=--verbose for details, or profile fewer kernels (-k, -c)"


def diagnose(outcome: RunOutcome, options: ProfileOptions) -> ProfileError | None:
    """The error for a run that produced no usable report (None when it did)."""
    if outcome.profiled:
        return None
    text = "\n".join(outcome.tool_lines)
    for known in DIAGNOSES:
        if known.pattern.search(text):
            return ProfileError(known.message, hint=known.hint)
    if outcome.no_kernels:
        app = outcome.app_exit_code
        exited = f" (the program exited with code {app})" if app is not None else ""
        return ProfileError(f"no kernels were profiled{exited}", hint=no_kernels_hint(options))
    last = last_error_line(outcome) or "no report was written"
    return ProfileError(f"ncu failed (exit code {outcome.returncode}): {last}", hint=VERBOSE_HINT)


@dataclass(frozen=True)
class ReportCheck:
    """A finished temporary report: how many launches it holds, or why it cannot be kept."""

    launches: int = 0
    problem: str | None = None
    table: RunTable | None = None  # the report as read, so that it is not read a second time


def ncu_report_installed() -> bool:
    """Whether NVIDIA's `ncu_report` module (the reader `analyze` prefers) can be imported."""
    from ncu_roof.ingest.rep import _quiet_stderr

    try:
        with _quiet_stderr():  # as `read_report` imports it: its C++ library logs to fd 2
            import ncu_report  # noqa: F401
    except ImportError:
        return False
    return True


def load_report(report: Path, tool: NcuTool | None = None) -> RunTable:
    """The report as `analyze` reads it, except that `ncu --import` (used when `ncu_report` is not
    installed) runs `tool`, the ncu that wrote it, not whichever ncu is first on PATH."""
    from ncu_roof.ingest import read_input
    from ncu_roof.ingest.rep import read_with_cli

    if tool is None or ncu_report_installed():
        return read_input(str(report))
    return read_with_cli(str(report), report.read_bytes(), tool)


def check_report(report: Path, tool: NcuTool | None = None) -> ReportCheck:
    """Load the finished temporary report: its launch count, or why it cannot be kept.

    The project's own reader decides, the one `analyze` uses: a truncated, empty or damaged report
    raises its `NcuRoofError`. `MissingToolError` (nothing here reads reports) propagates, and so do
    bugs; either way the report has not been moved into place.
    """
    try:
        table = load_report(report, tool)
    except MissingToolError:
        raise
    except NcuRoofError as err:
        return ReportCheck(problem=err.message.removeprefix(f"{report}: "))
    if len(table.frame) == 0:
        return ReportCheck(problem="the report holds no profiled kernel")
    return ReportCheck(launches=len(table.frame), table=table)


def damaged_report_error(outcome: RunOutcome, reason: str, target: Path) -> ProfileError:
    """ncu wrote a report that does not load: say why, quoting ncu's last error if it failed."""
    text = "\n".join(outcome.tool_lines)
    for known in DIAGNOSES:
        if known.pattern.search(text):
            return ProfileError(known.message, hint=known.hint)
    kept = f"{target} was left as it was" if target.exists() else "no report was written"
    if outcome.returncode == 0:
        return ProfileError(
            f"ncu exited normally but its report does not load: {reason}",
            hint=f"{kept}; check the free disk space, then {VERBOSE_HINT}",
        )
    last = last_error_line(outcome)
    if last is None:
        return ProfileError(
            f"ncu failed (exit code {outcome.returncode}) and its report does not load: {reason}",
            hint=f"{kept}; {VERBOSE_HINT}",
        )
    return ProfileError(
        f"ncu failed (exit code {outcome.returncode}): {last}",
        hint=f"{kept}; its new report does not load ({reason}); {VERBOSE_HINT}",
    )


# --- running -----------------------------------------------------------------------------------


@dataclass
class _Reader:
    """Splits ncu's merged output into tool lines (kept) and the program's output (passed on)."""

    sink: ProgressSink
    tool_lines: list[str] = field(default_factory=list)
    kernels: list[KernelProgress] = field(default_factory=list)

    def feed(self, chunks: Iterable[bytes]) -> None:
        pending = b""
        for chunk in chunks:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                self.line(raw.decode("utf-8", "replace") + "\n")
            if pending.startswith(b"==PROF== Profiling"):
                partial = parse_progress(pending.decode("utf-8", "replace"))
                if partial is not None and not partial.done:  # done: counted at its newline
                    self.sink.kernel(partial)
        if pending:
            self.line(pending.decode("utf-8", "replace"))

    def line(self, text: str) -> None:
        if not is_tool_line(text):
            self.sink.passthrough(text)
            return
        self.tool_lines.append(text.rstrip("\r\n"))
        progress = parse_progress(text)
        if progress is not None:
            self.kernels.append(progress)
            self.sink.kernel(progress)
        elif text.startswith("==WARNING==") and not _DIAGNOSED_WARNING.search(text):
            self.sink.passthrough(text)


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    """Bytes as ncu writes them, so that the replay dots show before the line ends."""
    while chunk := os.read(stream.fileno(), 65536):
        yield chunk


def _kill_group(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM the whole process group (ncu, the program, its children), then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def _sigint_held() -> Iterator[None]:
    """A second Ctrl-C must not stop the killing half way (main thread only: signal's rule)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def private_workdir(output: Path) -> Iterator[Path]:
    """A temporary folder beside the output (same file system, so the final rename is atomic)."""
    directory = output.parent
    if not directory.is_dir():
        raise BadInputError(f"{output}: directory {directory} does not exist", hint="create it first")
    work = Path(tempfile.mkdtemp(prefix=".ncu-roof-", dir=directory))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_ncu(argv: list[str], report: Path, sink: ProgressSink, timeout_s: float | None) -> RunOutcome:
    """Run ncu in its own process group; Ctrl-C and the timeout kill the group (no half report)."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=c_locale_env(),
        start_new_session=True,
    )
    assert proc.stdout is not None
    reader = _Reader(sink)
    thread = threading.Thread(target=reader.feed, args=(_chunks(proc.stdout),), daemon=True)
    thread.start()
    try:
        returncode = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise ProfileError(
            f"ncu timed out after {timeout_s:g} s (killed it and the program)",
            hint="profile fewer launches (-k regex:NAME, -c N), try --fast, or raise --timeout",
        ) from None
    except BaseException:  # Ctrl-C: the whole group goes; private_workdir drops the half report
        with _sigint_held():
            _kill_group(proc)
        raise
    finally:
        thread.join(timeout=5)
        proc.stdout.close()
        sink.close()
    return RunOutcome(
        returncode=returncode,
        tool_lines=tuple(reader.tool_lines),
        kernels=tuple(k for k in reader.kernels if k.done),
        report=report if report.is_file() else None,
        elapsed_s=time.monotonic() - started,
    )


def report_path(output: str) -> Path:
    """`runs/pr123` → `runs/pr123.ncu-rep` (ncu's own convention for `-o`)."""
    return Path(output if output.endswith(REPORT_SUFFIX) else output + REPORT_SUFFIX)


def publish_report(report: Path, target: Path) -> Path:
    """Move the finished temporary report into place (atomic: same file system)."""
    os.replace(report, target)
    return target


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
    report: Path
    kernels: int  # launches in the report (what ncu's progress lines said, when it cannot be read)
    table: RunTable | None  # the published report as read by the check (None when it could not be)
    app_exit_code: int | None
    csv: bytes | None
    elapsed_s: float


def run_profile(
    tool: NcuTool,
    options: ProfileOptions,
    sink: ProgressSink,
    runner: Callable[[list[str], Path, ProgressSink, float | None], RunOutcome] = run_ncu,
) -> ProfileResult:
    """Resolve the program, run ncu in a private folder, publish the report or raise a diagnosis."""
    if not options.program:
        raise UsageError("no program to profile", hint="ncu-roof profile [options] -- ./app args…")
    program = resolve_program(options.program[0])
    target = report_path(options.output)
    with private_workdir(target.absolute()) as work:
        export_base = work / "report"
        argv = build_argv(tool, options, program, export_base)
        outcome = runner(argv, export_base.with_suffix(REPORT_SUFFIX), sink, options.timeout_s)
        failure = diagnose(outcome, options)
        if failure is not None or outcome.report is None:
            raise failure or ProfileError("ncu wrote no report", hint="rerun with --ncu-args=--verbose")
        # ncu's exit code alone cannot decide: a crashing program makes ncu exit non-zero after a
        # good report, and a killed or failing ncu can leave a truncated one. The reader decides.
        try:
            check = check_report(outcome.report, tool)
        except MissingToolError:  # no ncu_report and ncu cannot run: ncu's exit code must do
            ok = outcome.returncode == 0 or outcome.app_exit_code is not None
            problem = None if ok else "nothing here can read it (no ncu_report, and ncu does not run)"
            check = ReportCheck(launches=len(outcome.kernels), problem=problem)
        if check.problem is not None:
            raise damaged_report_error(outcome, check.problem, target)
        published = publish_report(outcome.report, target)
    csv = export_csv(tool, published) if options.csv else None
    return ProfileResult(
        report=published,
        kernels=check.launches,
        table=None if check.table is None else replace(check.table, path=str(published)),
        app_exit_code=outcome.app_exit_code,
        csv=csv,
        elapsed_s=outcome.elapsed_s,
    )
