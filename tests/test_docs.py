"""Docs that cannot go stale: every `ncu-roof COMMAND --option` the README and docs/ show is a
real option of that command, as the CLI itself declares it (typer's click command objects)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer.main
from conftest import ROOT
from typer.core import TyperCommand, TyperGroup, TyperOption

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`(ncu-roof [^`]+)`")
_INVOCATION = re.compile(r"(?:^|[\s/(])ncu-roof ([a-z][a-z-]*)((?: [^#\n]*)?)")
_SHELL_END = re.compile(r"\s(?:\||&&|\|\||;|>|2>)\s")


def commands() -> dict[str, TyperCommand]:
    """The CLI's commands, as typer builds them for the parser (a group's as `GROUP SUBCOMMAND`:
    `history add`)."""
    from ncu_roof.cli import app, register

    register([])  # every command

    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    built = {name: command for name, command in group.commands.items() if isinstance(command, TyperCommand)}
    for name, sub in group.commands.items():
        if isinstance(sub, TyperGroup):
            built |= {f"{name} {n}": c for n, c in sub.commands.items() if isinstance(c, TyperCommand)}
    assert {n.split()[0] for n in built} == set(group.commands)
    return built


def option_names(command: TyperCommand) -> dict[str, TyperOption]:
    """Every spelling of every option of `command` (`-o` and `--output` alike)."""
    return {
        name: param
        for param in command.params
        if isinstance(param, TyperOption)
        for name in [*param.opts, *param.secondary_opts]
    }


def invocations(text: str) -> list[tuple[str, list[str]]]:
    """`(command, words)` for every `ncu-roof COMMAND …` in the code blocks and code spans."""
    snippets = _FENCE.findall(text) + _INLINE.findall(text)
    found = []
    for snippet in snippets:
        for match in _INVOCATION.finditer(snippet):
            rest = _SHELL_END.split(match[2], maxsplit=1)[0].replace("\\", " ")
            try:
                words = shlex.split(rest)
            except ValueError:  # an unclosed quote in prose: take the words as they stand
                words = rest.split()
            found.append((match[1], words))
    return found


def options_used(command: TyperCommand, words: list[str]) -> list[str]:
    """The options in `words`, up to `--` or (for a command that passes the rest on, such as
    `profile`) its first argument; option values are skipped."""
    by_name = option_names(command)
    passes_rest = not (command.context_settings or {}).get("allow_interspersed_args", True)
    used = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            break
        if word.startswith("-") and len(word) > 1 and not re.fullmatch(r"-[\d.]+%?", word):
            name = word.split("=", 1)[0]
            used.append(name)
            option = by_name.get(name)
            takes_value = option is not None and not option.is_flag and "=" not in word
            index += 2 if takes_value else 1
            continue
        if passes_rest:
            break
        index += 1
    return used


def documented() -> list[tuple[str, str, list[str]]]:
    """(document, command, words); a group's subcommand is part of the command (`history add`)."""
    groups = {name.split()[0] for name in commands() if " " in name}
    found = []
    for doc in DOCUMENTS:
        for cmd, words in invocations(doc.read_text("utf-8")):
            if cmd in groups:
                if not words:
                    continue  # the group named alone (`ncu-roof history`): no option to check
                cmd, words = f"{cmd} {words[0]}", words[1:]
            found.append((doc.name, cmd, words))
    return found


def test_the_readme_usage_block_is_found_and_read() -> None:
    readme = [(cmd, words) for doc, cmd, words in documented() if doc == "README.md"]
    assert {cmd for cmd, _ in readme} >= {"analyze", "predict", "profile", "diff", "plot", "gpus"}
    assert ("analyze", ["run.csv", "--gpu", "a10g", "--format", "json", "-o", "run.json"]) in readme


@pytest.mark.parametrize(("doc", "command", "words"), documented(), ids=lambda v: str(v)[:40])
def test_every_documented_option_exists(doc: str, command: str, words: list[str]) -> None:
    known = commands()
    assert command in known, f"{doc}: `ncu-roof {command}` is not a command ({sorted(known)})"
    cli = known[command]
    names = set(option_names(cli)) | {"--help", "-h"}
    unknown = [name for name in options_used(cli, words) if name not in names]
    assert unknown == [], f"{doc}: `ncu-roof {command} {' '.join(words)}` uses options it does not have"


def test_the_checker_sees_a_wrong_option_and_stops_at_the_program() -> None:
    known = commands()
    assert options_used(known["analyze"], ["r.csv", "--gpu", "a10g", "--frmat", "json"]) == [
        "--gpu",
        "--frmat",
    ]
    # profile passes everything after its program on: the program's own options are not checked
    assert options_used(known["profile"], ["--fast", "./app", "--n", "1"]) == ["--fast"]
    assert options_used(known["profile"], ["-o", "x", "--", "python", "-c", "1"]) == ["-o"]
    assert invocations("```\nncu-roof diff a b --threshold 5% | tee x  # a comment --nope\n```") == [
        ("diff", ["a", "b", "--threshold", "5%"])
    ]


def test_documents_exist() -> None:
    assert all(isinstance(doc, Path) and doc.is_file() for doc in DOCUMENTS)


def test_the_quickstart_install_reads_reports() -> None:
    """A fresh machine's first command installs the `.ncu-rep` reader (the `rep` extra, which
    pyproject.toml defines as NVIDIA's ncu-report)."""
    import tomllib

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    quickstart = text.split("## Quickstart", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    assert "pip install -q '.[rep]'" in quickstart.splitlines()[1]
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("ncu-report") for d in project["optional-dependencies"]["rep"])
