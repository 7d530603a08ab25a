"""Which module registers each command on the app: `main` imports only the one a command line
names (`ncu-roof predict` never loads the analysis), every one for the help or a typo."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

COMMAND_MODULES = {
    "analyze": "analyze",
    "plot": "report",
    "diff": "report",
    "predict": "predict",
    "gpus": "predict",
    "profile": "profile",
}


def register(args: Sequence[str]) -> None:
    """Import the module of the command `args` name (the first word not an option: the root
    options take no value), or every command module when they name none."""
    word = next((a for a in args if not a.startswith("-")), None)
    names = [COMMAND_MODULES[word]] if word in COMMAND_MODULES else sorted(set(COMMAND_MODULES.values()))
    for name in names:
        importlib.import_module(f"ncu_roof.cli.{name}")
