"""docs/ci.md's GitHub Actions steps, run as written against this checkout (no network, no GPU)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ci.md"


def github_steps() -> list[str]:
    """The shell of every `run:` step of the first yaml block, in order (one-line or `run: |`)."""
    block = re.search(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert block is not None
    lines = block.group(1).splitlines()
    steps: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        match = re.match(r"^(\s*)(?:- )?run: (.*)$", line)
        if match and not line.lstrip().startswith("#"):
            indent, body = len(match.group(1)), match.group(2)
            if body.strip() == "|":
                script = []
                i += 1
                while i < len(lines) and (
                    not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
                ):
                    script.append(lines[i].strip() if not lines[i].strip() else lines[i][indent + 2 :])
                    i += 1
                steps.append("\n".join(script))
                continue
            steps.append(re.sub(r"\s+#.*$", "", body))
        i += 1
    return steps


def test_the_recipe_installs_from_the_repository_with_the_rep_extra() -> None:
    install, *_ = github_steps()
    assert install == 'pip install "./.ncu-roof[rep]"'
    assert "pip install ncu-roof\n" not in DOC.read_text(encoding="utf-8")
    assert 'rep = ["ncu-report' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_the_recipe_steps_run_against_a_local_checkout(tmp_path: Path) -> None:
    _install, *steps = github_steps()
    assert steps and "ncu-roof diff" in steps[-1]
    (tmp_path / ".ncu-roof").symlink_to(ROOT)  # what the second checkout step puts there
    perf = tmp_path / "perf"
    perf.mkdir()
    example = ROOT / "ncu_roof" / "data" / "example.csv"  # inputs are recognised by content
    shutil.copy(example, perf / "base.ncu-rep")
    shutil.copy(example, perf / "head.ncu-rep")
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    for step in steps:
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", step], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, (step, done.stderr)
    out = tmp_path / "out"
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!doctype html>")
    assert (out / "roofline.svg").read_bytes().startswith(b"<?xml")
    assert (out / "roofline.png").read_bytes().startswith(b"\x89PNG")
    assert (out / "diff.md").read_text(encoding="utf-8").startswith("<!-- ncu-roof:diff -->")
    text = summary.read_text(encoding="utf-8")
    assert "<!-- ncu-roof -->" in text and "<!-- ncu-roof:diff -->" in text
