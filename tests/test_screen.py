"""Text laid out in one place: `render.console.screen` is the one terminal check, and
`render.console.PIPE_WIDTH` the one width of text that goes to a file or a pipe, for every command."""

from __future__ import annotations

import ast
import inspect
import os
import sys
from pathlib import Path

import pytest
from conftest import run_cli, unfolded
from rich.cells import cell_len

from ncu_roof.pipeline import example_path
from ncu_roof.render import console, diffout, gpusout, predictout
from ncu_roof.render.console import MIN_WIDTH, PIPE_WIDTH, Screen, screen
from ncu_roof.render.formats import RenderOptions

PACKAGE = Path(__file__).resolve().parent.parent / "ncu_roof"
NARROW = 80  # narrower than every command's text at PIPE_WIDTH, wide enough for each to fit
EXAMPLE = str(example_path())
# (command, whether its text goes to a file): every command that lays text out
COMMANDS = {
    "analyze": (("analyze", "--example"), False),
    "analyze -o": (("analyze", "--example"), True),
    "diff": (("diff", EXAMPLE, EXAMPLE), False),
    "diff -o": (("diff", EXAMPLE, EXAMPLE, "--format", "table"), True),
    "predict": (("predict", "exp", "--n", "1e8", "--gpu", "h100-sxm5"), False),
    "predict -o": (("predict", "exp", "--n", "1e8", "--gpu", "h100-sxm5"), True),
    "gpus": (("gpus",), False),
    "gpus -o": (("gpus",), True),
}


def test_screen_follows_the_terminal_and_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert screen(None) == Screen(PIPE_WIDTH, color=False)
    assert PIPE_WIDTH == 120
    monkeypatch.setenv("COLUMNS", "80")  # a CI job's width: a pipe and a file honour it
    assert screen(None) == Screen(80, color=False)
    assert screen("out.txt") == Screen(80, color=False)
    monkeypatch.setenv("COLUMNS", "20")  # below the narrowest layout
    assert screen(None) == Screen(MIN_WIDTH, color=False)
    for junk in ("", "wide", "-5", "0"):
        monkeypatch.setenv("COLUMNS", junk)
        assert screen(None) == Screen(PIPE_WIDTH, color=False), junk
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr("shutil.get_terminal_size", lambda *_, **__: os.terminal_size((97, 30)))
    assert screen(None) == Screen(97, color=True)
    assert screen("-") == Screen(97, color=True)
    assert screen("out.txt") == Screen(PIPE_WIDTH, color=False)  # a file: no terminal
    monkeypatch.setenv("NO_COLOR", "1")
    assert screen(None) == Screen(97, color=False)
    monkeypatch.setenv("NO_COLOR", "")  # no-color.org: set and not empty
    assert screen(None) == Screen(97, color=True)


def _widest(name: str, tmp_path: Path) -> int:
    args, to_file = COMMANDS[name]
    target = tmp_path / "out.txt"
    done = run_cli(*args, *(("-o", str(target)) if to_file else ()))
    assert done.returncode == 0, done.stderr
    text = target.read_text(encoding="utf-8") if to_file else done.stdout
    return max(cell_len(line) for line in text.splitlines())


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_lays_text_out_at_the_one_width(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert NARROW < _widest(name, tmp_path) <= PIPE_WIDTH
    monkeypatch.setattr(console, "PIPE_WIDTH", NARROW)
    assert _widest(name, tmp_path) <= NARROW


def test_renderers_default_to_the_one_width() -> None:
    for render in (diffout.render_diff_table, predictout.render_text, gpusout.render_text):
        assert inspect.signature(render).parameters["width"].default == PIPE_WIDTH, render
    assert RenderOptions().width == PIPE_WIDTH


def _given_widths(node: ast.AST) -> list[ast.expr]:
    """What `node` gives as a width: `width=X`, a parameter `width`'s default, `width: int = X`,
    or a terminal size's fallback `get_terminal_size((X, …))`."""
    if isinstance(node, ast.keyword) and node.arg == "width":
        return [node.value]
    if isinstance(node, ast.arguments):
        named = [*node.posonlyargs, *node.args]
        pairs = [
            *zip(named[len(named) - len(node.defaults) :], node.defaults, strict=True),
            *zip(node.kwonlyargs, node.kw_defaults, strict=True),
        ]
        return [d for a, d in pairs if a.arg == "width" and d is not None]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "width":
        return [node.value] if node.value is not None else []
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "get_terminal_size" and node.args:
        first = node.args[0]
        return [first.elts[0] if isinstance(first, ast.Tuple) else first]
    return []


def _literal_widths(tree: ast.AST) -> list[int]:
    """The lines where a number itself is given as a width."""
    return [w.lineno for node in ast.walk(tree) for w in _given_widths(node) if isinstance(w, ast.Constant)]


def test_no_module_gives_a_width_of_its_own() -> None:
    own = {
        str(path.relative_to(PACKAGE)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := _literal_widths(ast.parse(path.read_text(encoding="utf-8"))))
    }
    # only `text.shorten`'s default: a kernel name's length, not a layout
    assert {name: len(lines) for name, lines in own.items()} == {"base/text.py": 1}
    probe = ast.parse(
        "def f(width: int = 100, *, w: int = 1) -> None: g(width=80)\n"
        "shutil.get_terminal_size((240, 40))\n"
        "class Options:\n    width: int = 240\n"
    )
    assert sorted(_literal_widths(probe)) == [1, 1, 2, 4]  # the check sees each kind


def test_stderr_messages_fold_on_a_terminal_stay_one_line_in_a_pipe_a_command_whole() -> None:
    """`… lack counters … --verbose …` is 102 characters: on an 80-column terminal folded at a space
    (the rest indented two); in a pipe one line, whatever COLUMNS says (a CI log is searched by
    line); the ncu command --verbose prints is one line to copy."""
    args = ("analyze", "fixtures/raw_base.csv", "--format", "json")
    narrow = {"COLUMNS": str(NARROW)}
    assert run_cli(*args, env=narrow, stderr_tty=True).stderr.splitlines() == [
        "read fixtures/raw_base.csv: 2 launches (raw-csv)",
        "2 launches lack counters (l1, shared, sol); see the notes, or --verbose for an",
        "  ncu command that collects them",
    ]
    assert run_cli(*args, env=narrow).stderr.splitlines()[1] == (
        "2 launches lack counters (l1, shared, sol); see the notes, or --verbose for an ncu command "
        "that collects them"
    )
    verbose = run_cli(*args, "-v", env=narrow, stderr_tty=True).stderr.splitlines()
    assert verbose[1] == "2 launches lack counters (l1, shared, sol); a run that collects them:"
    assert verbose[2].startswith("  ncu --metrics gpu__") and verbose[2].endswith(" -o report ./your_app")


def test_every_warning_fits_columns_errors_stay_one_line(tmp_path: Path) -> None:
    """On a terminal, a damaged row's warning and a folder's note: each line within COLUMNS; an error and its
    hint are one line each, however long (what scripts and the README promise)."""
    raw = PACKAGE.parent / "fixtures" / "raw_base.csv"
    header, units, first, second = raw.read_text(encoding="utf-8").split("\n")[:4]
    short = '",'.join(first.split('",')[:10]) + '"'  # 10 of the 27 cells
    (tmp_path / "damaged.csv").write_text("\n".join([header, units, short, second, ""]), "utf-8")
    (tmp_path / "notes.md").write_text("not a report\n", encoding="utf-8")
    env = {"COLUMNS": str(NARROW)}
    done = run_cli(
        "analyze", ".", "--skip-bad-rows", "--format", "json", env=env, cwd=tmp_path, stderr_tty=True
    )
    assert done.returncode == 0
    assert max(map(len, done.stderr.splitlines())) <= NARROW
    said = unfolded(done.stderr)
    assert "note: ./notes.md: skipped (not a report, CSV or text file)" in said
    assert "skipped 1 damaged row (line 3: 10 cells where the header has 27); 1 kernel left out" in said
    failed = run_cli("analyze", "damaged.csv", "--format", "json", env=env, cwd=tmp_path, stderr_tty=True)
    error, hint = failed.stderr.splitlines()
    assert failed.returncode == 3 and error.startswith("error: damaged.csv: line 3: ")
    assert hint.startswith("hint: repair or re-export the file;") and len(hint) > NARROW


def test_stderr_width_as_screen_finds_stdout_s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    monkeypatch.setenv("COLUMNS", "20")
    assert console.stderr_width() is None  # a pipe: no folding
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(sys.stderr, "fileno", lambda: 2)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((70, 24)))
    assert console.stderr_width() == MIN_WIDTH  # COLUMNS first, as for stdout
    monkeypatch.delenv("COLUMNS")
    assert console.stderr_width() == 70
