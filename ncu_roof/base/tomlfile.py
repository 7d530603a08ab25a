"""Reading TOML: the user's files (roofs, expectations) with one error per failure, and the
package's own tables and assets (`ncu_roof/data`)."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from ncu_roof.errors import BadInputError


def read_toml(path: str, what: str, hint: str) -> dict[str, Any]:
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such {what} file", hint=hint) from None
    except IsADirectoryError:
        raise BadInputError(f"{path}: is a directory, not a TOML file", hint=hint) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise BadInputError(f"{path}: not valid TOML ({err})", hint=hint) from None


def package_text(name: str) -> str:
    return (resources.files("ncu_roof") / "data" / name).read_text(encoding="utf-8")


def package_table(name: str) -> dict[str, Any]:
    return tomllib.loads(package_text(f"{name}.toml"))
