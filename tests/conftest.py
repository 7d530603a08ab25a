"""Shared pytest options: `--run-gpu` opts in to the tests marked `gpu` (skipped by default)."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-gpu", action="store_true", default=False, help="run tests that need a GPU")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-gpu"):
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU; opt in with --run-gpu")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real ncu outputs (`../shared/ncu-corpus`); skips when absent."""
    if not (CORPUS / "MANIFEST.md").is_file():
        pytest.skip(f"ncu corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def fixtures() -> Path:
    """The project's own hand-written inputs (`fixtures/`)."""
    return FIXTURES
