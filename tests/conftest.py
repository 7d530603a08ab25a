"""Shared test helpers: the corpus and fixture folders, `--run-gpu`, `--update-golden`, and
`run_cli`, which runs `ncu-roof` in this process through `ncu_roof.cli.main` (exit code included).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "ncu-corpus"
FIXTURES = ROOT / "fixtures"
GOLDEN = ROOT / "tests" / "golden"


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


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real ncu outputs (`../shared/ncu-corpus`); skips when absent."""
    if not (CORPUS / "MANIFEST.md").is_file():
        pytest.skip(f"ncu corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def fixtures() -> Path:
    """The project's own hand-written inputs (`fixtures/`)."""
    return FIXTURES


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether `--update-golden` was given: golden files are rewritten, not compared."""
    return bool(request.config.getoption("--update-golden"))


# --- the CLI, in process ------------------------------------------------------------------------


@dataclass(frozen=True)
class CliResult:
    """What one `ncu-roof` run left: named as `subprocess.CompletedProcess` names them."""

    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes


class _Capture(io.TextIOWrapper):
    """A text stream over bytes (so that `.buffer` works, as on a real stdout) that is no TTY."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="strict", newline="", write_through=True)

    def isatty(self) -> bool:
        """Never a terminal, as a pipe to a subprocess is not."""
        return False

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
) -> CliResult:
    """Run `ncu-roof ARGS…` in this process through `ncu_roof.cli.main`, as the console script does.

    The exit code is the one `main` gives `sys.exit` (so the documented codes are what is tested);
    stdout and stderr are captured, and neither is a TTY. `cwd` defaults to the repository root.
    """
    from ncu_roof.cli import main

    out, err = _Capture(), _Capture()
    stdin_stream = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    streams = (sys.stdin, sys.stdout, sys.stderr)
    code: int
    with _environment(env, cwd):
        sys.stdin, sys.stdout, sys.stderr = stdin_stream, out, err
        try:
            main(list(args))
            code = 0
        except SystemExit as done:
            code = _exit_code(done.code)
        finally:
            sys.stdin, sys.stdout, sys.stderr = streams
    stdout = out.data()
    return CliResult(code, stdout.decode("utf-8", "replace"), err.data().decode("utf-8", "replace"), stdout)


def _exit_code(code: object) -> int:
    """`sys.exit`'s argument as the process exit code it would become."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1
