"""The roofline decides wherever it can: on the corpus, every launch whose file holds its duration,
work (FLOP or ops) and the bytes of a tier is judged on the roofline (`scripts/corpus_coverage.py`,
as a new user runs it: `--gpu` only where the file names no GPU and none can be inferred)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import analyzed, load_script, normalized

from ncu_roof.analysis.core import Analysis
from ncu_roof.base.vocabulary import RoofChoice

pytestmark = pytest.mark.corpus


def _analyzed(path: Path, gpu: str | None) -> Analysis:
    return analyzed(path) if gpu is None else analyzed(path, RoofChoice(gpu_key=gpu))


def test_every_launch_with_time_work_and_traffic_is_on_the_roofline(corpus: Path) -> None:
    coverage = load_script("corpus_coverage")
    tally = coverage.tally(coverage.corpus_files(corpus), analyze=_analyzed)
    share = tally.basis["roofline"] / tally.with_inputs
    print(f"{tally.with_inputs} launches with time, work and traffic: {share:.0%} on the roofline")
    # 456 before tensor FLOPs became unknown where FLOPs per tensor instruction are (the A100
    # NERSC CSV's 7 GEMM launches hold no other work counter): 449
    assert tally.with_inputs >= 449
    assert share == 1.0, dict(tally.basis)


def test_every_form_of_one_run_counts_each_tier_by_the_same_measure(corpus: Path) -> None:
    # a report and its raw-page re-exports (the CSVs say no ncu version: their measures are
    # chosen by the metrics present) pick the same counter per tier and launch; the A40 run
    # (ncu 2022.4) counts L2 as lts__t_sectors x 32 in every form, not 0 B of xbar2l1tex reads

    compared = 0
    for report in sorted(corpus.glob("*.ncu-rep")):
        stem = report.name.removesuffix(".ncu-rep")
        base = normalized(report)
        for form in sorted((corpus / "reexport").glob(f"{stem}.*raw*.csv")):
            other = normalized(form)
            for tier in ("dram", "l2", "l1", "shared"):
                for a, b in zip(base[f"{tier}_bytes_recipe"], other[f"{tier}_bytes_recipe"], strict=True):
                    if isinstance(a, str) and isinstance(b, str):
                        assert a == b, (form.name, tier)
                        compared += 1
    assert compared >= 140  # 143: every launch and tier with traffic in both forms
    a40 = normalized(corpus / "reexport" / "a40_rep_2022.4.0_indexspaces.ncu2024.1-raw-base.csv")
    assert set(a40["l2_bytes_recipe"]) == {"counter:lts__t_sectors.sum*32"}
