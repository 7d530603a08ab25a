"""`ncu_roof.predict(...)` and `ncu_roof.diff(...)`: modules that are also the API call of their name.

The package has modules `ncu_roof.predict` and `ncu_roof.diff`, and the Python API has functions
of the same names (`ncu_roof.api.predict`, `ncu_roof.api.diff`). Python binds a loaded submodule
to the package attribute of its name, so the attribute cannot be the function; instead the module
itself becomes callable and calls the API function. Typed code can call `ncu_roof.api.predict`.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


class ApiModule(ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from ncu_roof import api

        return getattr(api, self.__name__.rpartition(".")[2])(*args, **kwargs)


def make_callable(name: str) -> None:
    """Call `ncu_roof.api.<last part of name>` when the module `name` is called."""
    sys.modules[name].__class__ = ApiModule
