"""The commands build their options objects from their parameters by name (`named_alike`): every
field of an options class must be a parameter of its command, or be given in another form."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import fields
from typing import Any

import pytest

from ncu_roof.cli.analyze import AnalyzeOptions, analyze_command
from ncu_roof.cli.profile import profile_command
from ncu_roof.profile.progress import ProfileOptions

COMMANDS: list[tuple[Callable[..., Any], type]] = [
    (analyze_command, AnalyzeOptions),
    (profile_command, ProfileOptions),
]


def given_in_another_form(command: Callable[..., Any]) -> set[str]:
    """The keywords of the command's `named_alike(...)` call."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(command)))
    calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "named_alike"
    ]
    assert len(calls) == 1
    return {k.arg for k in calls[0].keywords if k.arg is not None}


@pytest.mark.parametrize(("command", "options"), COMMANDS, ids=lambda c: getattr(c, "__name__", ""))
def test_every_option_field_is_a_parameter_of_its_command_or_given(
    command: Callable[..., Any], options: type
) -> None:
    parameters = set(inspect.signature(command).parameters)
    unset = {f.name for f in fields(options)} - parameters - given_in_another_form(command)
    assert not unset, f"{command.__name__} gives no value for {sorted(unset)}"
    assert "rendering" in given_in_another_form(analyze_command)  # the check reads real calls
