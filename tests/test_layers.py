"""The house matches its map: every module has a layer, imports only run downwards, and
docs/architecture.md lists exactly the package's modules, each in the layer this test gives it.

Layers, lowest first (a module may import its own layer and any layer below it):

    base → table → ingest → recipe → gpus → model → analysis → compare → pipeline → history → render → cli

Every import counts: module level, inside functions, and under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ncu_roof"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

LAYERS = (
    *("base", "table", "ingest", "recipe", "gpus", "model", "analysis", "compare"),
    *("pipeline", "history", "render", "cli"),
)

# module, or package prefix (longest match wins) → layer
LAYER_OF = {
    "ncu_roof": "cli",  # the package's namespace: the Python API (`ncu_roof.analyze`), its version
    # base: no project imports beyond base; everything may use it
    "ncu_roof.version": "base",
    "ncu_roof.errors": "base",
    "ncu_roof.base": "base",  # units, text, vocabulary, metric names, the ncu tool, TOML, signals
    # table: the per-launch table every reader returns
    "ncu_roof.ingest.table": "table",
    # ingest: readers, any ncu output → RunTable
    "ncu_roof.ingest": "ingest",
    # recipe: ncu metrics → FLOPs, bytes per tier, durations, each with its formula
    "ncu_roof.recipe": "recipe",
    # gpus: product facts, per-architecture figures, tier peaks, roofs (report, table, user file)
    "ncu_roof.gpus": "gpus",
    # model: the roofline itself, the SOL rule, the workloads it is asked about
    "ncu_roof.analysis.model": "model",
    "ncu_roof.analysis.sol": "model",
    "ncu_roof.analysis.workloads": "model",
    # analysis: verdicts, notes, groups, headroom, the launch table, predictions
    "ncu_roof.analysis": "analysis",
    # compare: base vs head, expectations
    "ncu_roof.compare": "compare",
    # pipeline: whole flows a caller runs (profile: run ncu, keep the report)
    "ncu_roof.pipeline": "pipeline",
    "ncu_roof.profile": "pipeline",
    # history: runs across commits and GPUs as a Parquet dataset, its queries, the gate
    "ncu_roof.history": "history",
    # render: Analysis → str/bytes, and the text helpers the sinks share
    "ncu_roof.render": "render",
    # cli: typer commands, writing, the terminal; the Python API at the same level
    "ncu_roof.cli": "cli",
    "ncu_roof.__main__": "cli",
    "ncu_roof.api": "cli",
}


def package_modules() -> list[str]:
    """Every module of the package, dotted (`ncu_roof.profile.run`; a package is its name)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = frozenset(package_modules())


def layer_of(module: str) -> str | None:
    """The layer of the longest `LAYER_OF` entry that is `module` or a package above it."""
    for prefix in sorted(LAYER_OF, key=len, reverse=True):
        if module == prefix or (module.startswith(prefix + ".") and prefix != "ncu_roof"):
            return LAYER_OF[prefix]
    return None


def _source_module(path: Path) -> tuple[str, bool]:
    parts = path.relative_to(ROOT).with_suffix("").parts
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(path: Path) -> set[str]:
    """The project modules the file at `path` imports, anywhere in it."""
    module, is_package = _source_module(path)
    return imports_in(path.read_text(encoding="utf-8"), module, is_package)


def imports_in(source: str, module: str, is_package: bool) -> set[str]:
    """The project modules `source` (the text of `module`) imports, anywhere in it:
    `from a import b` counts as `a.b` when `a.b` is a module, else as `a`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            origin = _absolute(node, module, is_package)
            for alias in node.names:
                candidate = f"{origin}.{alias.name}"
                found.add(candidate if candidate in MODULES else origin)
    return {name for name in found if name == "ncu_roof" or name.startswith("ncu_roof.")} - {module}


def violations() -> set[tuple[str, str]]:
    """(importer, imported) pairs where the imported module sits in a higher layer."""
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module, _ = _source_module(path)
        rank = LAYERS.index(layer_of(module) or "cli")
        for imported in imports_of(path):
            their = layer_of(imported)
            if their is not None and LAYERS.index(their) > rank:
                found.add((module, imported))
    return found


def test_every_module_has_a_layer_and_every_map_entry_a_module() -> None:
    assert [m for m in MODULES if layer_of(m) is None] == []
    unused = [p for p in LAYER_OF if not any(m == p or m.startswith(p + ".") for m in MODULES)]
    assert unused == [], "LAYER_OF names modules that do not exist"
    assert set(LAYER_OF.values()) <= set(LAYERS)


def test_imports_run_only_downwards() -> None:
    assert sorted(violations()) == [], "imports against the layers (importer, imported)"


def test_the_import_parser_sees_function_level_typing_and_relative_imports() -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ncu_roof.analysis.core import Analysis\n"
        "def f() -> None:\n    from ncu_roof.cli import analyze\n"
        "from . import run\nfrom ..render.text import one_line\nimport ncu_roof.errors\n"
        "from ncu_roof import __version__\n"
    )
    assert imports_in(source, "ncu_roof.profile.progress", is_package=False) == {
        "ncu_roof.analysis.core", "ncu_roof.cli.analyze", "ncu_roof.profile.run", "ncu_roof.render.text",
        "ncu_roof.errors", "ncu_roof",
    }  # fmt: skip
    assert imports_in("from . import progress\n", "ncu_roof.profile", is_package=True) == {
        "ncu_roof.profile.progress"
    }


def test_an_upward_import_is_a_violation() -> None:
    assert layer_of("ncu_roof.ingest.table") == "table" and layer_of("ncu_roof.ingest.csvfile") == "ingest"
    assert layer_of("ncu_roof.profile.run") == "pipeline" and layer_of("ncu_roof") == "cli"
    assert LAYERS.index("ingest") < LAYERS.index("recipe")  # so ingest → recipe is in the known set


# --- docs/architecture.md -----------------------------------------------------------------------

_ROW = re.compile(r"^\| `(ncu_roof[\w.]*)` \| (\w+) \|")


def documented_modules() -> dict[str, str]:
    """The module table of docs/architecture.md: module → the layer it is documented in."""
    rows = [_ROW.match(line) for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines()]
    return {match[1]: match[2] for match in rows if match}


def test_architecture_lists_every_module_in_its_layer() -> None:
    documented = documented_modules()
    assert sorted(documented) == sorted(MODULES)
    wrong = {m: (layer, layer_of(m)) for m, layer in documented.items() if layer != layer_of(m)}
    assert wrong == {}, "documented layer ≠ tests/test_layers.py's"


def test_architecture_names_the_layers_in_order() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert " → ".join(LAYERS) in text
