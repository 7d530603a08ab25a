"""At scale: a big diff written compact, and many inputs read in a pool."""

from __future__ import annotations

import functools
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS

from ncu_roof import pipeline
from ncu_roof.analysis.core import Analysis
from ncu_roof.base.vocabulary import GroupBy
from ncu_roof.errors import BadInputError
from ncu_roof.ingest import RunTable
from ncu_roof.pipeline import Request, pool_size, read_tables, run, run_each
from ncu_roof.render import jsonout
from ncu_roof.render.output import joined

CORPUS_INPUTS = (
    "reexport/a10_rep_2023.2.0_105-kernels-llm.ncu2024.1-raw-base.csv",
    "reexport/h100pcie_rep_2025.1_full_silu.ncu2024.1-raw-base.csv",
    "a10g_rep_2023.1.1_roofline-set.ncu-rep",
    "a100_details-kerneltime-rules_hier-roofline_bert-attn.csv",
    "rtx5090_details_cublas-gemv_metrics-sol-mwa-occ.csv",
)


@functools.cache
def one_process_tables() -> list[RunTable]:
    """CORPUS_INPUTS read in this process (`jobs=1`), once per session (read only)."""
    return read_tables([str(CORPUS / p) for p in CORPUS_INPUTS], Request(jobs=1))


@functools.cache
def one_process_analysis() -> Analysis:
    """The pipeline's analysis of `one_process_tables()`, once per session (read only)."""
    return run(one_process_tables())


@pytest.fixture
def five_inputs() -> Analysis:
    """The pipeline's analysis of CORPUS_INPUTS, shared by the chunk sizes below."""
    if not (CORPUS / "MANIFEST.md").is_file():
        pytest.skip(f"ncu corpus not found at {CORPUS}")
    return one_process_analysis()


@pytest.mark.parametrize("chunk", [1, 2, 3, 1000])
def test_a_big_diff_is_compact_and_equal_in_chunks(
    chunk: int, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past PRETTY_MAX_KERNELS pairs the diff is written compact, a chunk of pairs at a time (a
    chunk that ends the pairs, or the pairs that end a chunk, included)."""
    from ncu_roof.compare.comparison import diff
    from ncu_roof.render import diffout, jsonout

    analysis = one_process_analysis()
    result = diff(analysis, analysis)
    pretty = joined(diffout.diff_json_pieces(result))
    monkeypatch.setattr(jsonout, "PRETTY_MAX_KERNELS", 1)
    monkeypatch.setattr(diffout, "CHUNK_KERNELS", chunk)
    compact = joined(diffout.diff_json_pieces(result))
    assert "\n  " in pretty and compact.count("\n") == 1
    assert json.loads(compact) == json.loads(pretty)
    assert len(json.loads(compact)["kernels"]) == len(result.kernels)


def test_a_pool_reads_what_one_process_reads(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` with `jobs=2`: the tables its pool read (kept as `read_tables` returns them: one pool
    started, not two), and its analysis, are those of `jobs=1`."""
    paths = [str(corpus / p) for p in CORPUS_INPUTS]
    pooled: list[RunTable] = []

    def kept(*args: Any, **kwargs: Any) -> list[RunTable]:
        pooled.extend(read_tables(*args, **kwargs))
        return pooled

    monkeypatch.setattr(pipeline, "read_tables", kept)
    pooled_json = jsonout.render_json(run(paths, Request(jobs=2)))
    assert [t.path for t in pooled] == paths
    for a, b in zip(one_process_tables(), pooled, strict=True):
        assert a.frame.equals(b.frame) and a.ncu_version == b.ncu_version
    assert pooled_json == jsonout.render_json(one_process_analysis())  # of what `jobs=1` reads


def test_a_bad_input_in_a_pool_is_the_same_error(corpus: Path) -> None:
    paths = [str(corpus / CORPUS_INPUTS[0]), str(corpus / "b200_edge_error-code-only.csv")]
    with pytest.raises(BadInputError, match="holds ncu messages but no CSV") as err:
        read_tables(paths, Request(jobs=2))
    assert err.value.hint


def test_diff_sides_analyzed_each_as_alone(corpus: Path) -> None:
    paths = [str(corpus / p) for p in CORPUS_INPUTS[:2]]
    log: list[str] = []
    both = run_each(paths, Request(), log.append)
    assert [jsonout.render_json(a) for a in both] == [jsonout.render_json(run([p])) for p in paths]
    assert [line.split(":")[0] for line in log] == [f"read {p}" for p in paths]  # in input order
    bad = [paths[0], str(corpus / "b200_edge_error-code-only.csv")]
    logged: list[str] = []
    with pytest.raises(BadInputError, match="holds ncu messages but no CSV"):
        run_each(bad, Request(jobs=2), logged.append)
    assert logged and logged[0].startswith(f"read {paths[0]}:")  # the good side's lines come first


def test_the_first_bad_side_is_the_error_raised(corpus: Path, tmp_path: Path) -> None:
    """When both sides are bad, the first one's error is raised, and nothing is logged before it."""
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    logged: list[str] = []
    with pytest.raises(BadInputError, match="holds ncu messages but no CSV"):
        run_each([str(corpus / "b200_edge_error-code-only.csv"), str(empty)], Request(jobs=2), logged.append)
    assert logged == []
    with pytest.raises(BadInputError, match="file is empty"):
        run_each([str(empty), str(corpus / "b200_edge_error-code-only.csv")], Request(jobs=2), logged.append)


def test_pool_only_when_it_pays(tmp_path: Path) -> None:
    small = tmp_path / "small.csv"
    small.write_text("x")
    assert pool_size([str(small)] * 8, None) == 1  # 8 bytes in all: not worth a process
    assert pool_size([str(small)] * 3, 2) == 2
    assert pool_size([str(small)], 4) == 1


def test_progress_bar_only_for_a_person_and_many_inputs(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ncu_roof import pipeline

    paths = [str(corpus / p) for p in CORPUS_INPUTS]
    assert pipeline._progress(paths) is paths  # stderr is not a terminal here
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert pipeline._progress(paths[:3]) == paths[:3]  # too few to bother
    tables = read_tables(paths, Request(jobs=1))  # the bar advances as each input is read
    assert [t.path for t in tables] == paths


def test_a_pool_that_cannot_start_reads_here(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers started as fresh interpreters die in a script without a `__main__` guard: the
    inputs are then read in this process, not lost."""
    import concurrent.futures
    from concurrent.futures.process import BrokenProcessPool

    class Broken(concurrent.futures.ProcessPoolExecutor):
        def submit(self, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
            raise BrokenProcessPool("a worker died")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Broken)
    paths = [str(corpus / p) for p in CORPUS_INPUTS[:2]]
    assert [t.path for t in read_tables(paths, Request(jobs=2))] == paths


def test_groups_are_made_once_per_analysis(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ncu_roof.analysis import groups

    analysis = run([str(corpus / CORPUS_INPUTS[0])])
    made: list[GroupBy] = []
    make = groups._group_kernels

    def counted(a: Analysis, by: GroupBy, notes: bool) -> list[groups.KernelGroup]:
        made.append(by)
        return make(a, by, notes)

    monkeypatch.setattr(groups, "_group_kernels", counted)
    first = groups.group_kernels(analysis)
    again = groups.group_kernels(analysis)
    assert made == [GroupBy.KERNEL] and first == again and first is not again
    assert sum(g.count for g in first) == len(analysis.kernels) == 105
    groups.group_kernels(analysis, GroupBy.NONE)
    assert made == [GroupBy.KERNEL, GroupBy.NONE]
    assert groups.group_kernels(analysis, notes=False) == first and len(made) == 2  # served by those
    other = replace(analysis, extra={})  # another analysis: its own groups
    assert groups.group_kernels(other) == first and len(made) == 3


def test_a_groups_verdicts_are_distinct_phrases_by_time() -> None:
    """Launches whose verdicts differ only where the phrase does not show (a percentage beside an
    fp32 ceiling) share one phrase, with their times summed."""
    from ncu_roof.analysis import groups
    from ncu_roof.base.vocabulary import Bound, VerdictBasis
    from ncu_roof.pipeline import example_path

    analysis = run([example_path()])
    k0 = replace(analysis.kernels[0], name="k", verdict_basis=VerdictBasis.ROOFLINE)
    launches = [
        replace(
            k0, id=1, bound=Bound.COMPUTE, compute_ceiling="fp32", compute_ceiling_pct=50.0, duration_s=1.0
        ),
        replace(
            k0, id=2, bound=Bound.COMPUTE, compute_ceiling="fp32", compute_ceiling_pct=60.0, duration_s=1.0
        ),
        replace(k0, id=3, bound=Bound.MEMORY, binding="dram", duration_s=1.5),
    ]
    (group,) = groups.group_kernels(Analysis(analysis.inputs, analysis.devices, launches))
    # 2.0 s, then 1.5 s of the 3.5 s
    assert group.verdicts == ("compute-bound (fp32) · roofline", "memory-bound (dram) · roofline")
    assert group.verdict_shares == pytest.approx((2.0 / 3.5, 1.5 / 3.5))
