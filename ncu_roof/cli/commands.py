"""Imports every command module so that each registers itself on the app."""

from ncu_roof.cli import analyze  # noqa: F401
from ncu_roof.cli import predict  # noqa: F401
from ncu_roof.cli import profile  # noqa: F401
