"""Shared test helpers: the corpus and fixture folders, `--run-gpu`, `--update-golden`, `run_cli`,
which runs `ncu-roof` in this process through `ncu_roof.cli.main` (exit code included), inputs
written (`input_file`), read and analysed (`analyzed`) once per session, and the hypothesis
profiles (`NCU_ROOF_HYPOTHESIS=ci|thorough`).
"""

from __future__ import annotations

import atexit
import functools
import gc
import hashlib
import importlib.util
import io
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TextIO

import pytest
from hypothesis import settings

from ncu_roof.base.vocabulary import TrafficDefinition
from ncu_roof.cli import GC_FIRST_THRESHOLD_OBJECTS

if TYPE_CHECKING:
    import pandas as pd

    from ncu_roof.analysis.core import Analysis
    from ncu_roof.base.vocabulary import RoofChoice
    from ncu_roof.errors import NcuRoofError
    from ncu_roof.ingest import RunTable
    from ncu_roof.render.output import Document

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "ncu-corpus"
FIXTURES = ROOT / "fixtures"
GOLDEN = ROOT / "tests" / "golden"

# --- hypothesis: `ci` (the default) or `thorough` ----------------------------------------------
# `ci` is what `python -m pytest` runs: every property at hypothesis' 100 examples, except the few
# whose every example runs the recipe or a whole `analyze` (0.1-0.4 s each), which take the `ci`
# count they pass to `examples()`. `NCU_ROOF_HYPOTHESIS=thorough` runs 10x as many examples (and
# the slow properties their `thorough` count): after a change to the readers or the recipe, or
# nightly. Examples are random in both, so successive runs explore further; no deadline, as the
# time one example takes on a shared machine says nothing about the code.
HYPOTHESIS_PROFILE = os.environ.get("NCU_ROOF_HYPOTHESIS", "ci")
settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(HYPOTHESIS_PROFILE)


def examples(ci: int, thorough: int) -> int:
    """`max_examples` for a property whose examples are slow: `ci` by default, `thorough` when
    `NCU_ROOF_HYPOTHESIS=thorough`."""
    return thorough if HYPOTHESIS_PROFILE == "thorough" else ci


# --- the cyclic collector, as `ncu-roof` runs it ------------------------------------------------
# `cli.console` lets the cyclic collector pass rarely (`GC_FIRST_THRESHOLD_OBJECTS`); so does each
# worker here, which holds ~1 GB of objects (pandas, matplotlib, hypothesis, the analyses shared
# below): at the default threshold its full passes took 4-7 s of each worker's ~65 s. No test runs
# in this process is about when the collector runs (`console`'s own settings are tested in a process).
gc.set_threshold(GC_FIRST_THRESHOLD_OBJECTS, *gc.get_threshold()[1:])


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--run-gpu` and `--update-golden`."""
    parser.addoption("--run-gpu", action="store_true", default=False, help="run tests that need a GPU")
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/ from the current output instead of comparing with it",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `gpu` are skipped unless `--run-gpu` is given."""
    if config.getoption("--run-gpu"):
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU; opt in with --run-gpu")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# --- pytest-xdist (`-n auto`): what shares costly work on one worker ------------------------------
# The suites that read and analyse the whole corpus share `analyzed`/`normalized` below; on one
# worker, each corpus file is read and analysed once, not once per worker. So are the tests of a
# module whose module-scoped fixture takes seconds (a history dataset, the simulated history): set
# up once, not once per worker, nor again whenever a worker's tests of it are not one run. (By
# file: pytest-xdist's own `--dist loadgroup` cannot group on pytest 9.2, whose node ids it can no
# longer rewrite.)
CORPUS_SUITES = (
    "tests/test_corpus.py::",
    "tests/test_conformance_nsight.py::",
    "tests/test_roofs.py::",
    "tests/test_corpus_roofline.py::",
    "tests/test_csvout.py::test_every_corpus_input_has_the_json_fields_in_its_csv",
    "tests/test_headroom_sol.py::test_no_corpus_launch_is_promised_more_than_its_busiest_unit_allows",
)
MODULES_TOGETHER = ("tests/test_history.py::", "tests/test_history_simulation.py::")

try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # no pytest-xdist: the suite runs in one process
    pass
else:

    class CorpusTogether(LoadScopeScheduling):  # type: ignore[misc]  # pytest-xdist is untyped
        """`--dist load` (each test to whichever worker is free), but the corpus suites as one unit
        and each of `MODULES_TOGETHER` as one."""

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(CORPUS_SUITES):
                return "corpus"
            return nodeid.split("::")[0] if nodeid.startswith(MODULES_TOGETHER) else nodeid

    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
        """`-n N` schedules with `CorpusTogether`; another `--dist` mode asked for is kept."""
        return CorpusTogether(config, log) if config.getvalue("dist") == "load" else None


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text laid out at the pipe width whatever the shell that runs the suite exports as COLUMNS
    (a test that is about COLUMNS sets it)."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real ncu outputs (`../shared/ncu-corpus`); skips when absent."""
    if not (CORPUS / "MANIFEST.md").is_file():
        pytest.skip(f"ncu corpus not found at {CORPUS}")
    return CORPUS


# --- inputs read and analysed once per session ---------------------------------------------------
# Reading a report and analysing it are pure: tests that share an input share one result. The
# tables and analyses returned are shared: read them, never modify them.


@functools.cache
def read_result(path: Path) -> RunTable | NcuRoofError:
    """`read_input(path)` once per session: the table, or the `NcuRoofError` it raised."""
    from ncu_roof.errors import NcuRoofError
    from ncu_roof.ingest import read_input

    try:
        return read_input(str(path))
    except NcuRoofError as err:
        return err


def read_once(path: Path) -> RunTable:
    """`read_input(path)` once per session (its error raised again on every call)."""
    from ncu_roof.errors import NcuRoofError

    table = read_result(path)
    if isinstance(table, NcuRoofError):
        raise table
    return table


@functools.cache
def analyzed(path: Path, choice: RoofChoice | None = None) -> Analysis:
    """`analyze([read_input(path)], choice)` (the default roofs without one), once per session."""
    from ncu_roof.analysis.core import analyze

    return analyze([read_once(path)]) if choice is None else analyze([read_once(path)], choice)


def load_script(name: str) -> ModuleType:
    """`scripts/NAME.py` as a module (the scripts are no package): what a test of a script calls."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def modules_loaded_by(args: list[str], names: set[str]) -> set[str]:
    """Which of `names` a fresh interpreter has imported once `ncu-roof ARGS` is done (it must
    exit 0): the imports a command pays for, e.g. pandas' ~0.35 s."""
    (loaded,) = modules_loaded_after_each([args], names)
    return loaded


def modules_loaded_after_each(runs: list[list[str]], names: set[str]) -> list[set[str]]:
    """Which of `names` one fresh interpreter has imported once each `ncu-roof ARGS` of `runs`
    is done, run after run in that order (each must exit 0). An import is never undone: the
    first run whose set holds a name is the one that loaded it."""
    import json
    import subprocess

    probe = (
        "import json, sys\n"
        "from ncu_roof.cli import main\n"
        "loaded = []\n"
        f"for args in {runs!r}:\n"
        "    try:\n        main(args)\n"
        "    except SystemExit as done:\n        assert done.code == 0, (args, done.code)\n"
        f"    loaded.append(sorted({sorted(names)!r} & sys.modules.keys()))\n"
        "print(json.dumps(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded: list[list[str]] = json.loads(done.stdout)
    return [set(each) for each in loaded]


def input_file(name: str, text: str) -> Path:
    """A file `name` holding `text`, written once per session (and process) into a folder of
    its own: tests that build the same input share one path, so `analyzed` reads it once."""
    folder = _inputs() / hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
    path = folder / name
    if not path.exists():
        folder.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path


@functools.cache
def _inputs() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="ncu-roof-inputs-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def normalize(metrics: pd.DataFrame, **options: Any) -> pd.DataFrame:
    """`recipe.normalize_columns` as a pandas frame, each column its own copy (texts kept object)."""
    import pandas as pd

    from ncu_roof.recipe import normalize_columns

    columns = normalize_columns(metrics, **options).items()
    return pd.DataFrame({n: pd.Series(v, index=metrics.index, dtype=v.dtype, copy=True) for n, v in columns})


def normalized(path: Path, traffic: TrafficDefinition = TrafficDefinition.NSIGHT) -> pd.DataFrame:
    """`normalize` of one input's metrics with the ncu version that wrote it, once per session."""
    return _normalized(path, traffic)  # one cache key whether `traffic` is given or defaulted


@functools.cache
def _normalized(path: Path, traffic: TrafficDefinition) -> pd.DataFrame:
    table = read_once(path)
    return normalize(table.frame[table.metric_columns], ncu_version=table.ncu_version, traffic=traffic)


@pytest.fixture
def fixtures() -> Path:
    """The project's own hand-written inputs (`fixtures/`)."""
    return FIXTURES


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether `--update-golden` was given: golden files are rewritten, not compared."""
    return bool(request.config.getoption("--update-golden"))


# --- the CLI, in process ------------------------------------------------------------------------
# typer builds `app`'s click command tree again on every call (15-20 ms: each option's type hints
# evaluated anew), ~300 times a session here; a process that runs `ncu-roof` once builds it once.
# The tree built from one app is the same every time (commands are registered at import; a click
# command keeps no state between runs), so in this process each app's tree is built once.


def _build_each_command_tree_once() -> None:
    import typer
    import typer.main

    build = typer.main.get_command
    built: dict[int, tuple[typer.Typer, object]] = {}

    def once(app: typer.Typer) -> object:
        if id(app) not in built:
            from ncu_roof.cli import register

            register([])  # every command, before the tree is built (`main` registers only its own)
            built[id(app)] = (app, build(app))  # the app kept alive: its id stays its own
        return built[id(app)][1]

    setattr(typer.main, "get_command", once)  # noqa: B010  (mypy: a module's function replaced)


_build_each_command_tree_once()


def unfolded(stderr: str) -> str:
    """The CLI's messages each on one line again: it folds them to stderr's width (`cli.folded`),
    each further line indented, where a path's length decides where."""
    return re.sub(r"\n +(?=\S)", " ", stderr)


@dataclass(frozen=True)
class CliResult:
    """What one `ncu-roof` run left: named as `subprocess.CompletedProcess` names them."""

    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes


class _Capture(io.TextIOWrapper):
    """A text stream over bytes (so that `.buffer` works, as on a real stdout): no TTY, as a pipe to
    a subprocess is not, unless `tty` (a terminal's stderr, for what only a terminal shows)."""

    def __init__(self, tty: bool = False) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="strict", newline="", write_through=True)
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def data(self) -> bytes:
        """Everything written so far."""
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue()


@contextmanager
def _environment(env: Mapping[str, str] | None, cwd: Path | str | None) -> Iterator[None]:
    """`env` replaces the whole environment and `cwd` the working folder, as for a subprocess."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.chdir(cwd if cwd is not None else ROOT)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)


def run_cli(
    *args: str,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes = b"",
    stdout: TextIO | None = None,
    stderr_tty: bool = False,
) -> CliResult:
    """Run `ncu-roof ARGS…` in this process through `ncu_roof.cli.main`, as the console script does
    (less `cli.console`'s settings of the garbage collector, which are the process' own).

    The exit code is the one `main` gives `sys.exit` (so the documented codes are what is tested);
    stdout and stderr are captured, and neither is a TTY. `cwd` defaults to the repository root.
    `stdout`, when given, is written to instead (a terminal, for what only a terminal shows); the
    result's stdout is then empty. `stderr_tty`: stderr says it is a terminal.
    """
    from ncu_roof.cli import main

    out, err = _Capture(), _Capture(tty=stderr_tty)
    stdin_stream = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    streams = (sys.stdin, sys.stdout, sys.stderr)
    code: int
    with _environment(env, cwd):
        sys.stdin, sys.stdout, sys.stderr = stdin_stream, stdout or out, err
        try:
            main(list(args))
            code = 0
        except SystemExit as done:
            code = _exit_code(done.code)
        finally:
            if stdout is not None:
                stdout.flush()
            sys.stdin, sys.stdout, sys.stderr = streams
    printed = out.data()
    return CliResult(code, printed.decode("utf-8", "replace"), err.data().decode("utf-8", "replace"), printed)


def _exit_code(code: object) -> int:
    """`sys.exit`'s argument as the process exit code it would become."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def document_text(data: Document) -> str | bytes:
    """A rendered document whole (its pieces joined, as text)."""
    from ncu_roof.render.output import joined

    return data if isinstance(data, str | bytes) else joined(data)
