"""The CLI's process: OpenBLAS held to one thread (not passed on to the programs it runs), a report
read with SIGCHLD ignored or stdout closed, usage errors before any read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, run_cli

from ncu_roof.base import ncu
from ncu_roof.ingest import read_input

REPORT = CORPUS / "a10g_rep_2023.1.1_roofline-set.ncu-rep"


def _ignore_sigchld_and_close_stdout() -> None:
    import os
    import signal

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # inherited across exec, as from some supervisors
    os.close(1)


def test_a_report_is_read_with_sigchld_ignored_and_stdout_closed(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("ncu_report")
    out = tmp_path / "run.json"
    for setup in (_ignore_sigchld_and_close_stdout, lambda: os.close(1)):
        ran = subprocess.run(
            [sys.executable, "-m", "ncu_roof", "analyze", str(REPORT), "-o", str(out)],
            capture_output=False,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=setup,
            timeout=120,
        )
        assert ran.returncode == 0, ran.stderr
        assert len(json.loads(out.read_text())["kernels"]) == 4


def test_usage_errors_come_before_the_inputs(tmp_path: Path) -> None:
    """`--gpu` is checked before the inputs are expanded and read (exit 2, not 3)."""
    done = run_cli("analyze", str(tmp_path / "nothing*.csv"), "--gpu", "bogus")
    assert done.returncode == 2 and "unknown GPU" in done.stderr and "no file matches" not in done.stderr


def test_analyze_of_a_report_is_the_analysis_read_in_process(corpus: Path) -> None:
    """`ncu-roof analyze REPORT` prints what an analysis of the report read in this process renders."""
    pytest.importorskip("ncu_report")
    from ncu_roof.analysis.core import analyze
    from ncu_roof.render.jsonout import render_json

    done = run_cli("analyze", str(REPORT), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert done.stdout == render_json(analyze([read_input(str(REPORT))]))


@pytest.mark.parametrize(("user", "seen"), [(None, "1 None"), ("3", "3 3")])
def test_one_blas_thread_is_not_passed_on_to_programs(user: str | None, seen: str) -> None:
    """The CLI runs OpenBLAS with one thread; ncu and the profiled program get the user's
    environment: without the variable, or with the user's own value."""
    probe = (
        "import os\n"
        "from ncu_roof.base import ncu\n"
        "ncu.one_blas_thread()\n"
        "import numpy\n"
        "print(os.environ.get(ncu.BLAS_THREADS), ncu.c_locale_env().get(ncu.BLAS_THREADS))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != ncu.BLAS_THREADS}
    if user is not None:
        env[ncu.BLAS_THREADS] = user
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == seen.split()
