"""`ncu-roof profile` without a GPU: a fake `ncu` (tests/fake_ncu/ncu) first on PATH records its
argv and environment and replays real ncu output; the `ncu` tests use NVIDIA's CLI when installed."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CliResult, run_cli

from ncu_roof.base.metrics import COLLECT
from ncu_roof.base.ncu import NcuTool
from ncu_roof.cli.profile import PlainProgress, progress_sink
from ncu_roof.profile.progress import (
    ROOFLINE_SECTIONS,
    KernelProgress,
    ProfileOptions,
    build_argv,
    parse_progress,
)
from ncu_roof.profile.run import _group_runs, _kill_group, _Reader

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fake_ncu" / "ncu"
CORPUS = ROOT.parent / "shared" / "ncu-corpus"
SILU_REPORT = CORPUS / "a100sxm_rep_2025.1_full_silu.ncu-rep"
OLD_REPORT = CORPUS / "v100_rep_basic_vectorops.ncu-rep"
NEW = NcuTool(path="/opt/ncu", version="2025.1.0.0")
PROGRAM = Path("/bin/app")


# --- the command line (pure) -------------------------------------------------------------------


def test_default_argv_is_set_full_plus_roofline_sections_config_off_and_program_last() -> None:
    options = ProfileOptions(program=("./app", "--n", "1024"))
    argv = build_argv(NEW, options, PROGRAM, Path("/tmp/w/report"))
    sections = [s for name in ROOFLINE_SECTIONS for s in ("--section", name)]
    assert argv == [
        "/opt/ncu", "--config-file", "off", "--set", "full", *sections,
        "--target-processes", "all", "-f", "-o", "/tmp/w/report", "/bin/app", "--n", "1024",
    ]  # fmt: skip


def test_ncu_2022_gets_no_config_file_flag_it_would_reject() -> None:
    old = NcuTool(path="ncu", version="2022.3.0.0")
    assert "--config-file" not in build_argv(old, ProfileOptions(("x",)), PROGRAM, Path("r"))


def test_fast_collects_exactly_the_recipe_metrics_and_no_set() -> None:
    argv = build_argv(NEW, ProfileOptions(("x",), fast=True), PROGRAM, Path("r"))
    assert "--set" not in argv and "--section" not in argv
    listed = argv[argv.index("--metrics") + 1].split(",")
    assert listed == sorted({m for names in COLLECT.values() for m in names})
    assert "gpu__time_duration.sum" in listed and "dram__bytes.sum" in listed


def test_filters_and_raw_ncu_args_pass_through_before_the_program() -> None:
    options = ProfileOptions(
        program=("./app", "-k", "mine"),
        kernel_name="regex:gemm",
        launch_count=5,
        launch_skip=2,
        nvtx_include=("Domain@Range",),
        target_processes="application-only",
        replay_mode="application",
        clock_control="none",
        cache_control="all",
        ncu_args=("--graph-profiling", "graph"),
    )
    argv = build_argv(NEW, options, PROGRAM, Path("r"))
    tail = argv[argv.index("--target-processes") :]
    assert tail == [
        "--target-processes", "application-only", "--kernel-name", "regex:gemm",
        "--launch-count", "5", "--launch-skip", "2", "--replay-mode", "application",
        "--clock-control", "none", "--cache-control", "all", "--nvtx", "--nvtx-include",
        "Domain@Range", "--graph-profiling", "graph", "-f", "-o", "r", "/bin/app", "-k", "mine",
    ]  # fmt: skip


# --- progress ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            '==PROF== Profiling "distribution_elementwise_grid..." - 3: 0%....50%....100% - 37 passes',
            KernelProgress("distribution_elementwise_grid...", 100, 37),
        ),
        (
            '==PROF== Profiling "basic_gemm": 0%....50%....100% - 37 passes',
            KernelProgress("basic_gemm", 100, 37),
        ),
        ('==PROF== Profiling "k" - 0: 0%....50%....100% - 1 pass\n', KernelProgress("k", 100, 1)),
        (  # ncu 2025 (the GH200 console export of the corpus)
            '==PROF== Profiling "vectorized_elementwise_kernel" - 2 (3/10): 0%....50%....100% - 10 passes',
            KernelProgress("vectorized_elementwise_kernel", 100, 10),
        ),
        ('==PROF== Profiling "k" - 7 (8/10): 0%....50%..', KernelProgress("k", 50, None)),
        ('==PROF== Profiling "k<int>" - 12: 0%....50%..', KernelProgress("k<int>", 50, None)),
        ("==PROF== Connected to process 42 (/bin/app)", None),
        ('Profiling "k" - 0: 0%....100% - 3 passes', None),
    ],
)
def test_progress_lines_old_new_2025_singular_and_partial(line: str, expected: KernelProgress | None) -> None:
    assert parse_progress(line) == expected


class Recorder:
    def __init__(self) -> None:
        self.kernels: list[KernelProgress] = []
        self.text: list[str] = []

    def kernel(self, progress: KernelProgress) -> None:
        self.kernels.append(progress)

    def passthrough(self, text: str) -> None:
        self.text.append(text)

    def close(self) -> None:
        pass


def test_reader_splits_program_output_from_tool_lines_across_chunk_boundaries() -> None:
    sink = Recorder()
    reader = _Reader(sink)
    reader.feed([b"hello from ", b"app\n==PROF== Profiling \"k\" - 0: 0%..", b"..50%....100% - 9 passes\n",
                 b"==WARNING== Unable to access the following 6 metrics\nbye"])  # fmt: skip
    assert sink.text == ["hello from app\n", "==WARNING== Unable to access the following 6 metrics\n", "bye"]
    assert [k.percent for k in sink.kernels] == [0, 100]  # the partial line showed live
    assert reader.kernels == [KernelProgress("k", 100, 9)]


def test_a_flood_of_ncu_output_is_kept_bounded_and_the_programs_passed_on_whole() -> None:
    """What `profile` holds of ncu's output is bounded: the last tool lines, the first launches,
    a line's first bytes; the program's output (one line of 3 MB without an end too) all passes."""
    from ncu_roof.profile import run as profile_run

    sink = Recorder()
    reader = _Reader(sink)
    progress = b"".join(b'==PROF== Profiling "k" - %d: 0%%....100%% - 1 pass\n' % i for i in range(120_000))
    warnings = b"==WARNING== flood\n" * 20_000
    endless = b"." * (3 << 20)
    stream = progress + warnings + endless
    reader.feed(stream[i : i + 65536] for i in range(0, len(stream), 65536))  # as `run_ncu` reads
    assert len(reader.tool_lines) == profile_run.MAX_TOOL_LINES
    assert len(reader.kernels) == profile_run.MAX_KERNELS
    assert max(map(len, sink.text)) <= profile_run.MAX_LINE_BYTES + 65536
    assert "".join(t for t in sink.text if not t.startswith("==")) == endless.decode()


def test_a_finished_line_split_before_its_newline_counts_once() -> None:
    sink = Recorder()
    _Reader(sink).feed([b'==PROF== Profiling "k" - 0: 0%....100% - 9 passes', b"\n"])
    assert sink.kernels == [KernelProgress("k", 100, 9)]


def test_plain_progress_when_not_a_tty_and_one_line_per_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    sink = progress_sink()
    assert isinstance(sink, PlainProgress)
    sink.kernel(KernelProgress("a\x1b[31m", 100, 1))
    sink.kernel(KernelProgress("b", 50, None))
    assert stream.getvalue() == "ncu-roof: kernel 1 profiled: a?[31m (1 pass)\n"


# --- end to end with the fake ncu --------------------------------------------------------------


def install_fake(path: Path) -> None:
    """The fake ncu at `path`, run by this Python (`#!/usr/bin/env python3` may be a slow shim)
    without `site` (`-S`): it needs the standard library only, and starts faster."""
    script = FAKE.read_text(encoding="utf-8").split("\n", 1)[1]
    path.write_text(f"#!{sys.executable} -S\n{script}", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def fake(tmp_path: Path) -> dict[str, str]:
    """The environment of a run: fake ncu first on PATH, a record file, a private HOME."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    install_fake(bin_dir / "ncu")
    env = {k: v for k, v in os.environ.items() if k not in ("NCU", "NO_COLOR")}
    env |= {
        "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        "FAKE_NCU_RECORD": str(tmp_path / "calls.json"),
        "LC_ALL": "de_DE.UTF-8",
        "COLUMNS": "200",
    }
    if SILU_REPORT.exists():
        env["FAKE_NCU_REPORT"] = str(SILU_REPORT)
    return env


def app_script(tmp_path: Path) -> Path:
    script = tmp_path / "app.sh"
    script.write_text('#!/bin/sh\necho "app says $*"\n')
    script.chmod(0o755)
    return script


def run(env: dict[str, str], *args: str, cwd: Path) -> CliResult:
    """`ncu-roof profile ARGS…` in this process, with `env` as its whole environment."""
    return run_cli("profile", *args, cwd=cwd, env=env)


def run_process(
    env: dict[str, str], *args: str, cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The same as a separate process: for what only a process shows (signals, timeouts, a GPU)."""
    return subprocess.run(
        [sys.executable, "-m", "ncu_roof", "profile", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout,
    )  # fmt: skip


def calls(env: dict[str, str]) -> list[dict[str, object]]:
    path = Path(env["FAKE_NCU_RECORD"])
    return json.loads(path.read_text()) if path.exists() else []


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.startswith(".ncu-roof-")]


needs_report = pytest.mark.skipif(not SILU_REPORT.exists(), reason="corpus report absent")


@needs_report
def test_success_publishes_report_shows_progress_and_the_analysis(
    fake: dict[str, str], tmp_path: Path
) -> None:
    app = app_script(tmp_path)
    (tmp_path / "runs").mkdir()
    done = run(fake, "-o", "runs/pr123", "--fast", "-k", "regex:silu", "-c", "5", "--", str(app),
               "--n", "1024", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = tmp_path / "runs" / "pr123.ncu-rep"
    assert report.read_bytes() == SILU_REPORT.read_bytes()
    assert "app says --n 1024" in done.stderr  # the program's output, passed through
    assert "ncu-roof: kernel 1 profiled: vector_add (37 passes)" in done.stderr
    assert "ncu-roof: kernel 2 profiled: rmsnorm<float> (1 pass)" in done.stderr
    # two progress lines, but the report holds three launches: the report's count is told
    assert "wrote runs/pr123.ncu-rep: 3 kernels profiled in" in done.stderr
    assert "silu" in done.stdout  # the analysis of the published report, as `analyze` prints it
    profile_call = calls(fake)[-1]
    argv = profile_call["argv"]
    assert isinstance(argv, list) and isinstance(profile_call["env"], dict)
    assert profile_call["env"]["LC_ALL"] == "C" and profile_call["env"]["LANG"] == "C"
    assert argv[1:3] == ["--config-file", "off"]
    assert argv[argv.index("--kernel-name") + 1] == "regex:silu"
    assert argv[argv.index("--launch-count") + 1] == "5"
    assert argv[-3:] == [str(app), "--n", "1024"]  # program args after `--` reach the program only
    assert leftovers(tmp_path / "runs") == []


@needs_report
def test_json_format_and_raw_csv_beside_the_report(fake: dict[str, str], tmp_path: Path) -> None:
    csv = tmp_path / "raw.csv"
    csv.write_text('"ID","Kernel Name","gpu__time_duration.sum"\n"","","ns"\n"0","k","1000"\n')
    fake["FAKE_NCU_CSV"] = str(csv)
    done = run(fake, "--csv", "--format", "json", "-o", "r", "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)  # stdout holds only the analysis: program output went to stderr
    assert (tmp_path / "r.csv").read_text() == csv.read_text()
    imported = calls(fake)[-1]["argv"]
    assert isinstance(imported, list)
    assert imported[1:] == ["--import", "r.ncu-rep", "--csv", "--page", "raw",
                            "--print-units", "base"]  # fmt: skip


@needs_report
def test_old_progress_format_and_a_crashing_program_still_analyzed(
    fake: dict[str, str], tmp_path: Path
) -> None:
    fake["FAKE_NCU_SCENARIO"] = "crash"
    done = run(fake, "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the program exited with code 11; analyzing the kernels profiled before it ended" in done.stderr
    assert (tmp_path / "report.ncu-rep").exists()
    fake["FAKE_NCU_SCENARIO"] = "old"
    done = run(fake, "--force", "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert "kernel 1 profiled: basic_gemm (37 passes)" in done.stderr


def test_run_that_profiled_nothing_keeps_the_earlier_report(fake: dict[str, str], tmp_path: Path) -> None:
    earlier = tmp_path / "report.ncu-rep"
    earlier.write_bytes(b"NVR\x00earlier")
    fake["FAKE_NCU_SCENARIO"] = "nokernels"
    fake["FAKE_NCU_REPORT"] = str(earlier)  # would be copied only by a success scenario
    done = run(fake, "--force", "-k", "nomatch", "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == 5
    assert earlier.read_bytes() == b"NVR\x00earlier"
    assert leftovers(tmp_path) == []
    argv = calls(fake)[-1]["argv"]
    assert isinstance(argv, list) and argv[argv.index("-o") + 1] != str(tmp_path / "report")


ERROR_AND_HINT = {
    "perm": ("ERR_NVGPUCTRPERM", "NVreg_RestrictProfilingToAdminUsers=0"),
    "nodriver": ("no NVIDIA GPU or driver", "profile where you can, analyze anywhere"),
    "nokernels": ("no kernels were profiled", "check the filters (used: --kernel-name nomatch)"),
    "unsupported": ("this ncu does not support the GPU", "install a newer Nsight Compute"),
    "dcgm": ("another tool holds the GPU's profiling counters", "dcgmi profile --pause"),
    "mig": ("ncu cannot lock clocks on a MIG instance", "--clock-control none"),
    "notexec": ("ncu could not start the program", "make sure it is executable"),
    "other": ("ncu failed (exit code 1): Unknown Error on device 0.", "--verbose"),
}


@pytest.mark.parametrize("scenario", sorted(ERROR_AND_HINT))
def test_each_failure_is_one_error_one_hint_exit_5(
    fake: dict[str, str], tmp_path: Path, scenario: str
) -> None:
    fake["FAKE_NCU_SCENARIO"] = scenario
    done = run(fake, "-k", "nomatch", "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == 5
    error, hint = ERROR_AND_HINT[scenario]
    lines = done.stderr.splitlines()
    assert [line for line in lines if line.startswith("error:")] == [lines[-2]]
    assert error in lines[-2] and lines[-1].startswith("hint:") and hint in lines[-1]
    assert not list(tmp_path.glob("*.ncu-rep"))


def test_no_kernels_hint_suggests_target_processes_all_when_it_was_off(
    fake: dict[str, str], tmp_path: Path
) -> None:
    fake["FAKE_NCU_SCENARIO"] = "nokernels"
    done = run(fake, "--target-processes", "application-only", "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert "kernels of child processes need --target-processes all" in done.stderr.splitlines()[-1]


@pytest.mark.parametrize("option", ["--timeout", "--kill-after"])
@pytest.mark.parametrize("seconds", ["inf", "nan"])
def test_seconds_that_are_no_number_of_seconds_are_refused_before_ncu_runs(
    fake: dict[str, str], tmp_path: Path, option: str, seconds: str
) -> None:
    # --kill-after inf held a Ctrl-C until a program that ignores SIGTERM ended: never
    done = run(fake, option, seconds, "--", "/bin/true", cwd=tmp_path)
    assert done.returncode == 2
    assert f"error: {option} {float(seconds)}: not a number of seconds" in done.stderr
    assert calls(fake) == []


@pytest.mark.parametrize(
    ("program", "message"),
    [("./missing", "./missing: program not found"), ("no-such-cmd-xyz", "not found on PATH"),
     ("data.txt", "data.txt: not an executable file")],
)  # fmt: skip
def test_program_checked_before_ncu_runs(
    fake: dict[str, str], tmp_path: Path, program: str, message: str
) -> None:
    (tmp_path / "data.txt").write_text("x")
    done = run(fake, "--", f"./{program}" if program == "data.txt" else program, cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr
    assert [c["argv"][1] for c in calls(fake)] == ["--version"]  # type: ignore[index]


def test_ncu_not_found_names_the_install_routes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NCU"} | {"PATH": str(tmp_path)}
    done = run(env, "--", "/bin/true", cwd=tmp_path)
    assert done.returncode == 4
    assert "error: ncu (Nsight Compute CLI) not found" in done.stderr
    assert "nsight-compute" in done.stderr and "--ncu PATH" in done.stderr


def test_explicit_ncu_option_is_used(fake: dict[str, str], tmp_path: Path) -> None:
    own = tmp_path / "tools" / "my-ncu"
    own.parent.mkdir()
    install_fake(own)
    fake["FAKE_NCU_SCENARIO"] = "perm"
    done = run(fake, "--ncu", str(own), "--", "/bin/true", cwd=tmp_path)
    assert done.returncode == 5
    assert f"using {own} (Nsight Compute 2025.1.0.0)" in done.stderr


@pytest.mark.parametrize(
    ("options", "code", "message"),
    [
        (["--gpu", "bogus"], 2, "bogus"),
        (["--analysis-output", "/nonexistent/a.json"], 1, "cannot write /nonexistent/a.json"),
        (["--gpu", "a10", "--roofs", "r.toml"], 2, "--gpu and --roofs"),
        (["--ncu-args", '--nvtx-include "unclosed'], 2, "--ncu-args"),
        (["--format", "json", "--analysis-output", "a.csv"], 2, "json contradicts --analysis-output a.csv"),
        # the analysis replaced the report (refused only after the profile) or the raw page (silently)
        (["--force", "--analysis-output", "new.ncu-rep"], 2, "is where profile writes its report"),
        (["--csv", "--analysis-output", "./new.csv"], 2, "is where profile writes its raw page"),
    ],
)
def test_analysis_options_are_checked_before_ncu_runs(
    fake: dict[str, str], tmp_path: Path, options: list[str], code: int, message: str
) -> None:
    # the bug: a bad --gpu, --analysis-output or --format failed only after the whole profile
    done = run(fake, "-o", "new", *options, "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == code, done.stderr
    line, _hint = _error_and_hint(done.stderr)
    assert message in line
    assert calls(fake) == []  # ncu never ran, not even `ncu --version`
    assert not list(tmp_path.glob("*.ncu-rep"))


def test_binary_analysis_for_a_terminal_names_the_analysis_output_option(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # profile's -o is the report's name: the hint names the option that writes the analysis
    import ncu_roof.cli.analyze as cli_analyze
    from ncu_roof.cli import main

    monkeypatch.setattr(cli_analyze, "to_terminal", lambda output: output is None)
    with pytest.raises(SystemExit) as done:
        main(["profile", "--format", "png", "--", "/bin/true"])
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: --format png writes binary data, not for a terminal",
        "hint: write it to a file: --analysis-output out.png",
    ]


def test_ncu_args_are_split_as_a_shell_would(fake: dict[str, str], tmp_path: Path) -> None:
    fake["FAKE_NCU_SCENARIO"] = "perm"  # fails after recording its argv; no report needed
    run(fake, "--ncu-args", '--nvtx-include "my range/" --verbose', "--", "/bin/true", cwd=tmp_path)
    argv = calls(fake)[-1]["argv"]
    assert isinstance(argv, list)
    assert argv[argv.index("--nvtx-include") + 1] == "my range/"
    assert "--verbose" in argv and '"my' not in argv


def test_check_report_reads_with_the_chosen_ncu_when_ncu_report_is_missing(
    fake: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the bug: without ncu_report, the report was read by whichever ncu PATH found, not --ncu
    from ncu_roof.profile.progress import RunOutcome
    from ncu_roof.profile.run import check_report

    broken = tmp_path / "path" / "ncu"
    broken.parent.mkdir()
    broken.write_text("#!/bin/sh\necho '==ERROR== wrong ncu' >&2\nexit 1\n")
    broken.chmod(0o755)
    chosen = Path(fake["PATH"].split(os.pathsep)[0]) / "ncu"
    from test_diff import BASE, raw_csv

    csv = tmp_path / "raw.csv"
    csv.write_text(raw_csv(BASE))
    report = tmp_path / "r.ncu-rep"
    report.write_bytes(b"NVR\x00report")
    monkeypatch.setenv("PATH", f"{broken.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NCU_CSV", str(csv))
    monkeypatch.setenv("FAKE_NCU_RECORD", fake["FAKE_NCU_RECORD"])
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # `import ncu_report` now fails
    outcome = RunOutcome(0, (), (), report)
    launches, _, _ = check_report(report, NcuTool(path=str(chosen), version="2025.1.0.0"), outcome, report)
    assert launches == len(BASE)
    assert [c["argv"][1:3] for c in calls(fake)] == [["--import", str(report)]]  # type: ignore[index]


def test_csv_without_ncu_report_imports_the_report_once(
    fake: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the bug: without ncu_report, `--csv` ran `ncu --import` twice (to check the report, to export it)
    from test_diff import BASE, raw_csv

    csv, report = tmp_path / "raw.csv", tmp_path / "written.ncu-rep"
    csv.write_text(raw_csv(BASE))
    report.write_bytes(b"NVR\x00report")
    fake |= {"FAKE_NCU_CSV": str(csv), "FAKE_NCU_REPORT": str(report)}
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # `import ncu_report` now fails
    done = run(fake, "--csv", "-o", "r", "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.csv").read_text() == csv.read_text()
    assert sum("--import" in str(c["argv"]) for c in calls(fake)) == 1


def test_ncu_import_failures_are_one_error_with_ncus_last_line(
    fake: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ncu_roof.base.ncu import import_raw_csv
    from ncu_roof.errors import BadInputError, ProfileError
    from ncu_roof.profile.run import export_csv

    monkeypatch.delenv("FAKE_NCU_CSV", raising=False)  # the fake ncu's --import then fails
    tool = NcuTool(path=str(Path(fake["PATH"].split(os.pathsep)[0]) / "ncu"), version=None)
    with pytest.raises(BadInputError, match=r"r\.ncu-rep: `ncu --import` failed: KeyError"):
        import_raw_csv(tool, "r.ncu-rep")
    with pytest.raises(ProfileError, match="`ncu --import --csv` failed: KeyError") as raised:
        export_csv(tool, Path("r.ncu-rep"))
    assert "the report is kept" in raised.value.hint


def _alive(process: str) -> bool:
    """Whether `pid:start time` (as the fake ncu writes it) still runs: not a zombie (dead, only not
    yet reaped by init), and not another process that was given its pid since."""
    pid, started = process.split(":")
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] not in ("Z", "X") and fields[19] == started


def _gone(*processes: str) -> bool:
    """Whether every `pid:start time` has stopped within a minute (killed before ncu-roof exited; a
    loaded machine may reap them late)."""
    deadline = time.monotonic() + 60
    while any(map(_alive, processes)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(map(_alive, processes))


def test_a_group_left_with_zombies_runs_no_more() -> None:
    """`kill(-group, 0)` counts a zombie, and an orphan's waits for init, which may reap it seconds
    late (this machine's does) or never (a container without one): a Ctrl-C waited the whole grace."""
    ended = subprocess.Popen(["/bin/sh", "-c", "exit 0"], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        stat = Path(f"/proc/{ended.pid}/stat")
        while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        os.killpg(ended.pid, 0)  # the unreaped zombie is still in its group
        assert not _group_runs(ended.pid)
    finally:
        ended.wait()
    running = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        assert _group_runs(running.pid)
    finally:
        running.kill()
        running.wait()


def test_what_the_kill_loop_raises_stays_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    """Raised as the group has just gone (a Ctrl-C during a timeout's kill): not lost to the
    SIGKILL's ProcessLookupError (review)."""
    import ncu_roof.profile.run as profile_run

    ended = subprocess.Popen(["sleep", "60"], start_new_session=True)

    def gone_then_raise(pgid: int) -> bool:
        ended.kill()
        ended.wait()
        raise KeyboardInterrupt

    monkeypatch.setattr(profile_run, "_group_runs", gone_then_raise)
    with pytest.raises(KeyboardInterrupt):
        _kill_group(ended, grace_s=1.0)


def test_a_process_named_in_bytes_that_are_no_utf8_is_seen_running() -> None:
    """A process' name is any bytes (`prctl(PR_SET_NAME)`); read as UTF-8, the kill loop raised
    before its SIGKILL (review)."""
    name = "ctypes.CDLL(None).prctl(15, b'\\xff\\xfebad')"  # PR_SET_NAME
    code = f"import ctypes, time; {name}; print(flush=True); time.sleep(60)"
    named = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert named.stdout is not None and named.stdout.readline() == b"\n"
        assert Path(f"/proc/{named.pid}/stat").read_bytes().startswith(b"%d (\xff\xfebad) " % named.pid)
        assert _group_runs(named.pid)
    finally:
        named.kill()
        named.wait()


def test_a_process_whose_threads_outlive_its_main_thread_runs_and_is_killed() -> None:
    """Its main thread shows as a zombie in /proc/PID/stat; it ignores SIGTERM: SIGKILLed."""
    code = (
        "import ctypes, signal, threading, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "threading.Thread(target=time.sleep, args=(300,)).start(); print(flush=True); "
        "ctypes.CDLL(None).pthread_exit(None)"
    )
    threads = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert threads.stdout is not None and threads.stdout.readline() == b"\n"
        stat = Path(f"/proc/{threads.pid}/stat")
        deadline = time.monotonic() + 60
        while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _group_runs(threads.pid)
        _kill_group(threads, grace_s=0.2)
        assert threads.poll() == -signal.SIGKILL
    finally:
        threads.kill()
        threads.wait()


def test_timeout_kills_the_whole_process_group_and_leaves_no_half_report(
    fake: dict[str, str], tmp_path: Path
) -> None:
    fake["FAKE_NCU_SCENARIO"] = "hang"
    fake["FAKE_NCU_PIDFILE"] = str(tmp_path / "pids")
    started = time.monotonic()
    done = run_process(fake, "--timeout", "2", "--", "/bin/true", cwd=tmp_path, timeout=60)
    assert time.monotonic() - started < 30
    assert done.returncode == 5
    assert "error: ncu timed out after 2 s (killed it and the program)" in done.stderr
    ncu_pid, child_pid = (tmp_path / "pids").read_text().split()
    assert _gone(ncu_pid, child_pid)
    assert not list(tmp_path.glob("*.ncu-rep")) and leftovers(tmp_path) == []


def _error_and_hint(stderr: str) -> tuple[str, str]:
    """The last two stderr lines, checked to be the run's only `error:` line and its `hint:`."""
    lines = stderr.splitlines()
    assert [line for line in lines if line.startswith("error:")] == [lines[-2]], stderr
    assert lines[-1].startswith("hint:"), stderr
    return lines[-2], lines[-1]


@needs_report
@pytest.mark.parametrize(
    ("scenario", "error"),
    [
        ("damaged", "error: ncu failed (exit code 1) and its report does not load: the report holds no"),
        ("damaged-error", "error: ncu failed (exit code 1): An error occurred while trying to profile."),
        ("damaged-ok", "error: ncu exited normally but its report does not load: the report holds no"),
    ],
)
def test_a_damaged_report_never_replaces_a_good_one(
    fake: dict[str, str], tmp_path: Path, scenario: str, error: str
) -> None:
    app = str(app_script(tmp_path))
    good = run(fake, "-o", "keep", "--", app, cwd=tmp_path)
    assert good.returncode == 0, good.stderr
    report = tmp_path / "keep.ncu-rep"
    before = report.read_bytes()
    assert before == SILU_REPORT.read_bytes()
    fake["FAKE_NCU_SCENARIO"] = scenario  # one progress line, the first 1000 bytes as the report
    done = run(fake, "-f", "-o", "keep", "--", app, cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    assert "wrote keep.ncu-rep" not in done.stderr
    line, hint = _error_and_hint(done.stderr)
    assert line.startswith(error)
    assert "keep.ncu-rep was left as it was" in hint
    assert ".ncu-roof-" not in line + hint  # the private folder is not the user's business
    assert report.read_bytes() == before
    assert leftovers(tmp_path) == []
    assert done.stdout == ""  # nothing analyzed


@needs_report
def test_ncu_failing_because_the_program_crashed_still_publishes_a_loadable_report(
    fake: dict[str, str], tmp_path: Path
) -> None:
    earlier = tmp_path / "report.ncu-rep"
    earlier.write_bytes(b"NVR\x00earlier")
    fake["FAKE_NCU_SCENARIO"] = "crash"  # ncu exits 11, the program's code, after a good report
    done = run(fake, "--force", "--format", "json", "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert earlier.read_bytes() == SILU_REPORT.read_bytes()  # renamed into place
    assert "wrote report.ncu-rep: 3 kernels profiled" in done.stderr  # one progress line
    assert "the program exited with code 11; analyzing the kernels profiled before it ended" in done.stderr
    assert "silu" in done.stdout and json.loads(done.stdout)  # and analyzed
    assert "error:" not in done.stderr
    assert leftovers(tmp_path) == []


def _stopped_while_profiling(
    fake: dict[str, str], tmp_path: Path, sig: signal.Signals, *options: str
) -> tuple[int, str, str]:
    """`ncu-roof profile` sent `sig` once the fake ncu wrote its pid file (FAKE_NCU_PIDFILE,
    `tmp_path/pids`): its exit code, stdout and stderr."""
    pidfile = tmp_path / "pids"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ncu_roof", "profile", *options, "--", "/bin/true"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=fake,
        # a shell's `&` may have left SIGINT ignored, and Python keeps an inherited SIG_IGN
        preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGHUP)],
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not pidfile.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pidfile.exists(), "the fake ncu never started"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


# stubborn: the program ignores SIGTERM and is SIGKILLed after the grace (`--kill-after 0.5`, not the
# default 5 s), whichever signal stopped ncu-roof (the same code path: once, not three times)
@pytest.mark.parametrize(
    ("sig", "words", "scenario"),
    [
        (signal.SIGINT, "interrupted", "hang"),
        (signal.SIGTERM, "stopped by SIGTERM", "hang"),
        (signal.SIGHUP, "stopped by SIGHUP", "hang"),
        (signal.SIGINT, "interrupted", "hang-stubborn"),
    ],
)
def test_ctrl_c_sigterm_and_sighup_kill_ncu_and_the_program_and_exit_128_plus_n(
    fake: dict[str, str], tmp_path: Path, sig: signal.Signals, words: str, scenario: str
) -> None:
    earlier = tmp_path / "report.ncu-rep"
    earlier.write_bytes(b"NVR\x00earlier")
    pidfile = tmp_path / "pids"
    fake["FAKE_NCU_SCENARIO"] = scenario  # a half report, a child, then sleep
    fake["FAKE_NCU_PIDFILE"] = str(pidfile)
    grace = ("--kill-after", "0.5") if scenario == "hang-stubborn" else ()
    code, out, err = _stopped_while_profiling(fake, tmp_path, sig, "--force", *grace)
    assert code == 128 + sig, err
    line, hint = _error_and_hint(err)
    assert line == f"error: {words}"
    assert "an earlier one is kept" in hint
    assert out == ""
    ncu_pid, child_pid = pidfile.read_text().split()
    assert _gone(ncu_pid, child_pid)
    assert earlier.read_bytes() == b"NVR\x00earlier"
    assert leftovers(tmp_path) == []


def test_the_program_gets_its_time_to_clean_up_before_the_group_is_killed(
    fake: dict[str, str], tmp_path: Path
) -> None:
    """Ctrl-C: ncu and the program get SIGTERM; a program that takes a second to clean up is not
    SIGKILLed as soon as ncu is gone (it has the grace ncu has)."""
    pidfile, cleaned = tmp_path / "pids", tmp_path / "cleaned"
    fake.update(
        FAKE_NCU_SCENARIO="hang-cleanup", FAKE_NCU_PIDFILE=str(pidfile), FAKE_NCU_CLEANED=str(cleaned)
    )
    code, _, err = _stopped_while_profiling(fake, tmp_path, signal.SIGINT)
    assert code == 128 + signal.SIGINT, err
    assert cleaned.exists()  # written after its second of cleaning up, before ncu-roof exited


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("point", ["check_report", "replace", "emit"])
def test_a_stopping_signal_after_ncu_leaves_no_temporary_folder_and_exits_128_plus_n(
    fake: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals, point: str
) -> None:
    """The signal arrives while the report is checked, while it is moved into place, or while
    the analysis runs: the private folder goes, an earlier report stays unless replaced whole."""
    import ncu_roof.cli.profile as cli_profile
    import ncu_roof.profile.run as profile_run

    def arrives(*args: object, **kwargs: object) -> None:
        os.kill(os.getpid(), sig)
        time.sleep(5)  # the handler raises first
        raise AssertionError("the signal did not stop the run")

    report = tmp_path / "fake.ncu-rep"
    report.write_bytes(b"NVR\x00whole")
    fake["FAKE_NCU_REPORT"] = str(report)
    earlier = tmp_path / "report.ncu-rep"
    earlier.write_bytes(b"NVR\x00earlier")
    if point == "emit":
        monkeypatch.setattr(profile_run, "check_report", lambda *args: (1, None, None))
        monkeypatch.setattr(cli_profile, "emit", arrives)
    elif point == "replace":  # the rename that publishes the report: the first in this run
        monkeypatch.setattr(profile_run, "check_report", lambda *args: (1, None, None))
        monkeypatch.setattr(os, "replace", arrives)
    else:
        monkeypatch.setattr(profile_run, point, arrives)
    done = run(fake, "--force", "--", "/bin/true", cwd=tmp_path)
    assert done.returncode == 128 + sig, done.stderr
    assert leftovers(tmp_path) == []
    expected = b"NVR\x00whole" if point == "emit" else b"NVR\x00earlier"
    assert earlier.read_bytes() == expected
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handlers are the process' again


@needs_report
def test_output_folder_is_created(fake: dict[str, str], tmp_path: Path) -> None:
    # the README's own `profile -o runs/pr123` failed unless runs/ existed
    done = run(fake, "-o", "runs/deep/pr123", "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "runs" / "deep" / "pr123.ncu-rep").read_bytes() == SILU_REPORT.read_bytes()
    assert "wrote runs/deep/pr123.ncu-rep: 3 kernels profiled in" in done.stderr


@pytest.mark.parametrize("target", ["report", "report.csv"])
def test_an_existing_report_is_refused_without_force_before_ncu_runs(
    fake: dict[str, str], tmp_path: Path, target: str
) -> None:
    existing = tmp_path / ("report.ncu-rep" if target == "report" else target)
    existing.write_bytes(b"NVR\x00earlier")
    done = run(fake, "--csv", "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # as analyze for an output it cannot write
    line, hint = _error_and_hint(done.stderr)
    assert line == f"error: {existing.name} already exists"
    assert "-f/--force" in hint
    assert existing.read_bytes() == b"NVR\x00earlier"
    assert [c["argv"][1] for c in calls(fake)] == ["--version"]  # type: ignore[index]
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("where", ["file/report", "/proc/report", "/proc/no-such-dir/report"])
def test_output_into_an_unwritable_place_exits_1_as_analyze_does(
    fake: dict[str, str], tmp_path: Path, where: str
) -> None:
    (tmp_path / "file").write_text("a file, not a folder")  # /proc: not writable even for root
    done = run(fake, "-o", where, "--", str(app_script(tmp_path)), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    line, _hint = _error_and_hint(done.stderr)
    assert line.startswith(f"error: cannot write {where}.ncu-rep")
    analyze = run_cli("analyze", "--example", "-o", f"{where}.json", cwd=tmp_path)
    assert analyze.returncode == done.returncode


def test_profile_format_has_no_short_f_that_would_mean_force(fake: dict[str, str], tmp_path: Path) -> None:
    done = run(fake, "-f", "json", "--", str(app_script(tmp_path)), cwd=tmp_path)
    # `-f` is --force (a flag), so `json` is the program: not found, before ncu profiles anything
    assert done.returncode == 2, done.stderr
    assert "json: program not found on PATH" in done.stderr


# --- the real ncu CLI (Debian's non-free nsight-compute works without a GPU) --------------------

real_ncu = pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu not on PATH (scripts/install-ncu.sh)")


@pytest.mark.ncu
@real_ncu
def test_real_ncu_without_gpu_gives_the_no_driver_diagnosis(tmp_path: Path) -> None:
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this machine has an NVIDIA driver")
    env = {k: v for k, v in os.environ.items() if k != "NCU"}
    done = run(env, "--", "/bin/true", cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    lines = done.stderr.splitlines()
    assert lines[-2] == "error: ncu could not reach a CUDA driver: no NVIDIA GPU or driver on this machine"
    assert "profile where you can, analyze anywhere" in lines[-1]
    assert not list(tmp_path.iterdir())


@pytest.mark.ncu
@real_ncu
@pytest.mark.skipif(not OLD_REPORT.exists(), reason="corpus report absent")
def test_import_fallback_with_real_ncu_matches_ncu_report(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ncu_report")
    from ncu_roof.ingest import read_input

    expected = read_input(str(OLD_REPORT)).frame
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # `import ncu_report` now fails
    table = read_input(str(OLD_REPORT))
    got = table.frame
    assert len(got) == len(expected) > 0
    assert list(got["gpu__time_duration.sum"]) == pytest.approx(list(expected["gpu__time_duration.sum"]))
    assert list(got["name"]) == list(expected["name"])


# --- a real GPU (opt in: pytest --run-gpu) ------------------------------------------------------

VECTOR_ADD = """
#include <cstdio>
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
int main() {
    int n = 1 << 24; float *a, *b, *c;
    cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&c, n * 4);
    vector_add<<<(n + 255) / 256, 256>>>(a, b, c, n);
    cudaDeviceSynchronize();
    printf("done\\n");
    return 0;
}
"""


@pytest.mark.gpu
@pytest.mark.parametrize("mode", [[], ["--fast"]])
def test_profile_a_tiny_cuda_program_for_real(tmp_path: Path, mode: list[str]) -> None:
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        pytest.skip("nvcc not found")
    (tmp_path / "vadd.cu").write_text(VECTOR_ADD)
    subprocess.run([nvcc, "-O2", "-o", str(tmp_path / "vadd"), str(tmp_path / "vadd.cu")], check=True)
    done = run_process(dict(os.environ), *mode, "--format", "json", "-o", "vadd", "--", "./vadd",
                       cwd=tmp_path, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "kernel 1 profiled: vector_add" in done.stderr
    assert (tmp_path / "vadd.ncu-rep").exists()
    assert "vector_add" in done.stdout


def test_too_old_ncu_is_refused_with_the_reason() -> None:
    from ncu_roof.errors import MissingToolError
    from ncu_roof.profile.progress import ProfileOptions, check_version

    options = ProfileOptions(program=("./app",))
    with pytest.raises(MissingToolError, match=r"2020\.1 or newer"):
        check_version("2019.5.0", options)
    regex = ProfileOptions(program=("./app",), kernel_name="regex:gemm")
    with pytest.raises(MissingToolError, match="regex"):
        check_version("2020.3.1", regex)
    check_version("2021.1.0", regex)
    check_version(None, regex)  # unknown versions are trusted


def test_verbose_shows_the_ncu_command_it_runs(fake: dict[str, str], tmp_path: Path) -> None:
    fake["FAKE_NCU_SCENARIO"] = "nokernels"  # ncu runs, profiles nothing: no report needed
    app = str(app_script(tmp_path))
    done = run(fake, "-v", "-o", "r", "--", app, "--n", "8", cwd=tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.startswith("running: ")]
    assert len(lines) == 1, done.stderr
    argv = shlex.split(lines[0].removeprefix("running: "))
    assert Path(argv[0]).name == "ncu" and argv[-3:] == [app, "--n", "8"]
    assert "-o" in argv and "--set" in argv
    quiet = run(fake, "-q", "-o", "r", "--", app, cwd=tmp_path)
    assert "running: " not in quiet.stderr and quiet.stderr.startswith("error: ")
    assert run(fake, "-o", "r", "--", app, cwd=tmp_path).stderr.count("running: ") == 0
