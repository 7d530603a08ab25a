"""ncu-roof: is each kernel memory-bound or compute-bound, at which tier, and how far below its roof?

The Python API (docs/api.md): `ncu_roof.analyze(...)`, `ncu_roof.predict(...)`, `ncu_roof.diff(...)`.
They load on first use, so `import ncu_roof` (and the CLI's `--help`) stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ncu_roof.version import __version__

__all__ = ["Analysis", "__version__", "analyze", "diff", "example_path", "predict"]

if TYPE_CHECKING:
    from ncu_roof.api import Analysis, analyze, diff, example_path, predict


def __getattr__(name: str) -> Any:
    """The API's names, from ncu_roof.api (loaded on first use)."""
    if name in __all__:  # (`__version__` is set above: never asked for here)
        return getattr(import_module("ncu_roof.api"), name)
    raise AttributeError(f"module 'ncu_roof' has no attribute {name!r}")
