"""The package version (the one `ncu-roof --version` prints and reports carry)."""

__version__ = "0.1.0"
