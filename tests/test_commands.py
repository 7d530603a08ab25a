"""`cli.COMMAND_MODULES`: the table of which module registers each command is complete, and a command
line loads only its own command's module."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import modules_loaded_by

from ncu_roof.cli import COMMAND_MODULES, app, register
from ncu_roof.ingest.rep import ncu_report_installed

CLI = Path(__file__).resolve().parents[1] / "ncu_roof" / "cli"


def test_every_command_is_in_the_table_with_the_module_that_registers_it() -> None:
    found = {
        name: path.stem
        for path in CLI.glob("*.py")
        for name in re.findall(
            r'@app\.command\(\s*"([a-z-]+)"|app\.add_typer\(\w+, name="([a-z-]+)"',
            path.read_text(encoding="utf-8"),
        )
        for name in name
        if name
    }
    assert found == COMMAND_MODULES
    register([])
    registered = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
    assert set(registered) == set(COMMAND_MODULES)


def test_a_command_line_loads_only_its_commands_module() -> None:
    probe = (
        "import sys\n"
        "from ncu_roof.cli import app, register\n"
        "register(['-q', 'predict', '--flops', '1'])\n"
        "print(sorted(c.name for c in app.registered_commands))\n"
        "print(sorted(m for m in sys.modules if m.startswith('ncu_roof.cli.')))\n"
        "print('ncu_roof.analysis.core' in sys.modules, 'pandas' in sys.modules)\n"
        "register(['-h', 'gpus'])  # the root help lists every command, in the help's order\n"
        "print([c.name for c in app.registered_commands] + [g.name for g in app.registered_groups])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    commands, modules, heavy, after_help = done.stdout.splitlines()
    assert commands == "['gpus', 'predict']"
    assert "ncu_roof.cli.analyze" not in modules and "ncu_roof.cli.predict" in modules
    assert heavy == "False False"
    assert after_help == str(list(COMMAND_MODULES))


def test_analyzing_a_report_loads_neither_pandas_nor_pyarrow(corpus: Path, tmp_path: Path) -> None:
    """A report read through `ncu_report` needs no DataFrame and no Arrow: the ~0.35 s of their
    imports is most of what `analyze` of a small report would cost."""
    report = corpus / "a10_rep_2023.2.0_105-kernels-llm.ncu-rep"
    out = tmp_path / "out.json"
    args = ["analyze", str(report), "--format", "json", "-o", str(out)]
    assert modules_loaded_by(args, {"pandas", "pyarrow", "matplotlib"}) == set()
    assert out.read_text(encoding="utf-8").count('"name": ') >= 105


def test_the_console_script_is_main() -> None:
    """`ncu-roof` and `python -m ncu_roof` run `console`: `main`'s exit code and output."""
    import tomllib

    project = tomllib.loads((CLI.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["ncu-roof"] == "ncu_roof.cli:console"
    module = subprocess.run(
        [sys.executable, "-m", "ncu_roof", "gpus", "--bogus"], capture_output=True, text=True, check=False
    )
    assert module.returncode == 2 and module.stderr.startswith("error: ")
    probe = (  # the cyclic collector's first threshold raised for the run, OpenBLAS at one thread
        "import gc, os\nfrom ncu_roof import cli\n"
        "cli.main = lambda: print(gc.get_threshold()[0], os.environ.get('OPENBLAS_NUM_THREADS'))\n"
        "cli.console()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == ["200000", "1"]


@pytest.mark.parametrize(
    ("setup", "code", "stderr"),
    [
        ("cli.main = lambda: sys.exit('a message')", 1, "a message\n"),
        ("cli.main = lambda: sys.exit(None)", 0, ""),
    ],
)
def test_the_console_script_exits_as_the_interpreter_would(setup: str, code: int, stderr: str) -> None:
    probe = f"import sys\nfrom ncu_roof import cli\n{setup}\ncli.console()\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=20)
    assert (done.returncode, done.stderr) == (code, stderr)


_BUFFERED_THEN_EXIT = (  # output still in stdout's buffer when main exits; an atexit handler, and an
    # object whose `__del__` runs when the interpreter frees its objects at exit: each says so
    "import atexit, sys\nfrom ncu_roof import cli\n"
    "atexit.register(lambda: sys.stderr.write('atexit ran'))\n"
    "class Freed:\n    def __del__(self) -> None:\n        sys.stderr.write(', freed')\n"
    "kept = Freed()\n"
    "cli.main = lambda: (sys.stdout.write('x' * 1_000), sys.exit(3))\n"
    "cli.console()\n"
)


def test_the_console_script_skips_the_interpreters_freeing_but_not_atexit_or_the_output() -> None:
    """As mypy's `hard_exit`: no object freed one by one at exit; what dependencies registered
    with atexit (matplotlib removes its temporary folder) runs, the output is flushed, the exit
    code kept."""
    done = subprocess.run(
        [sys.executable, "-c", _BUFFERED_THEN_EXIT], capture_output=True, text=True, timeout=20
    )
    assert (done.returncode, len(done.stdout), done.stderr) == (3, 1_000, "atexit ran")


def test_a_flush_that_fails_leaves_the_exit_to_the_interpreter() -> None:
    full = (  # stdout a stream whose every flush fails, as on a full disk
        "import io\nclass Full(io.StringIO):\n    def flush(self) -> None:\n"
        "        raise OSError(28, 'No space left on device')\nsys.stdout = Full()\n"
    )
    probe = _BUFFERED_THEN_EXIT.replace("cli.console()", full + "cli.console()")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=20)
    assert done.returncode == 120  # the interpreter's own code for a last flush that failed
    assert done.stderr.startswith("atexit ran") and "No space left on device" in done.stderr
    assert done.stderr.count("atexit ran") == 1 and done.stderr.endswith(", freed")  # the usual exit


def test_a_library_thread_still_running_gets_the_usual_exit_which_waits_for_it() -> None:
    late = (
        "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.2), print('late'))).start()\n"
    )
    probe = _BUFFERED_THEN_EXIT.replace("cli.console()", late + "cli.console()")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=20)
    assert (done.returncode, done.stdout.endswith("late\n"), done.stderr) == (3, True, "atexit ran, freed")


def test_a_short_flag_means_one_thing_in_every_command() -> None:
    """As in ncu: `-f` is `--force` wherever it exists; `-F` is `--format` in every command."""
    import typer.main

    from ncu_roof.cli import app, register

    register([])  # every command
    commands = getattr(typer.main.get_command(app), "commands", {})
    assert {"analyze", "gpus", "predict", "profile", "plot", "diff"} <= set(commands)
    meanings: dict[str, set[str]] = {}
    leaves = [(name, c) for name, c in commands.items() if not hasattr(c, "commands")]
    groups = [(name, c) for name, c in commands.items() if hasattr(c, "commands")]
    assert [name for name, _ in groups] == ["history"]
    leaves += [(f"{g} {name}", c) for g, group in groups for name, c in group.commands.items()]
    for name, command in leaves:
        for param in command.params:
            longs = [o for o in param.opts if o.startswith("--")]
            for short in (o for o in param.opts if len(o) == 2):
                meanings.setdefault(short, set()).update(longs or [f"{name}:{param.name}"])
    assert meanings["-F"] == {"--format"}
    assert meanings["-f"] == {"--force"}
    assert {s for s, longs in meanings.items() if len(longs) > 1} == set()


def test_a_command_that_may_read_a_report_loads_the_report_reader_before_numpy(tmp_path: Path) -> None:
    """ncu_report 2025.3.1 crashed reading a report once numpy was loaded before it (an H200
    machine): the console script loads it first for `profile`, a report or a folder, else not."""
    probe = (
        "import sys\n"
        "from ncu_roof.cli import report_reader_first\n"
        "report_reader_first(sys.argv[1:])\n"
        "print('ncu_report' in sys.modules, 'numpy' in sys.modules)\n"
    )
    for args, loaded in ((["analyze", "run.ncu-rep"], True), (["profile", "./app"], True),
                         (["analyze", str(tmp_path)], True), (["analyze", "run.csv"], False)):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True
        )
        assert done.stdout.split() == [str(loaded and ncu_report_installed()), "False"], args
