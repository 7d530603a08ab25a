"""Imports every command module so that each registers itself on the app."""

from ncu_roof.cli import analyze, predict, profile, report

__all__ = ["analyze", "predict", "profile", "report"]
