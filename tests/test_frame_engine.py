"""The launch frame's column-wise steps against the plain per-row rule each stands for: the notes
gathered per launch, the latency notes made once per distinct combination, a rule's sentences,
texts and enums as columns, and the summary's note templates."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis.frame import enum_texts, sentences, texts
from ncu_roof.analysis.model import busiest_pipe
from ncu_roof.analysis.notes import Made, _gathered
from ncu_roof.analysis.notes_verdict import per_distinct
from ncu_roof.base.arrays import object_array
from ncu_roof.base.vocabulary import Bound
from ncu_roof.render.summary import _NUMBER

WORDS = st.sampled_from(["a", "b", "c", "sm 12% busy", "x y", None])


@st.composite
def rules(draw: st.DrawFn) -> tuple[int, Made]:
    """n launches and rules of every form: one text for all its rows, a text (or None) per row, a
    list of sentences per row."""
    n = draw(st.integers(0, 12))
    made: Made = []
    for _ in range(draw(st.integers(0, 5))):
        rows = np.array(sorted(draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))), dtype=np.int64)
        form = draw(st.sampled_from(["one", "each", "lists"]))
        if form == "one":
            made.append((rows, draw(st.sampled_from(["one text", "another"]))))
        elif form == "each":
            made.append((rows, object_array([draw(WORDS) for _ in rows])))
        else:
            made.append((rows, [draw(st.lists(st.sampled_from(["p", "q"]), max_size=3)) for _ in rows]))
    return n, made


@given(rules())
def test_gathered_notes_are_each_rules_sentences_of_a_launch_in_rule_order(
    case: tuple[int, Made],
) -> None:
    n, made = case
    expected: list[list[str]] = [[] for _ in range(n)]
    for rows, said in made:
        for k, j in enumerate(rows.tolist()):
            if isinstance(said, str):
                expected[j].append(said)
            elif isinstance(said, np.ndarray):
                expected[j] += [] if said[k] is None else [said[k]]
            else:
                expected[j] += said[k]
    assert _gathered(made, n).to_list() == expected


NUMBERS = st.sampled_from([0.0, -0.0, 1.0, 2.5, float("nan"), float("inf")])


@given(st.lists(st.tuples(NUMBERS, NUMBERS, st.sampled_from(["dram", "l2", None])), min_size=1, max_size=30))
def test_made_once_per_distinct_combination_is_made_for_every_row(
    rows: list[tuple[float, float, str | None]],
) -> None:
    """Bit for bit: -0.0 is not 0.0, NaN is one value; the texts count as they are."""
    a, b, words = (
        np.array(c, dtype=object if i == 2 else float) for i, c in enumerate(zip(*rows, strict=True))
    )

    def make(at: np.ndarray) -> pl.Series:
        return pl.Series([f"{x!r} {y!r} {w}" for x, y, w in zip(a[at], b[at], words[at], strict=True)])

    assert per_distinct([a, b], words, make).to_list() == make(np.arange(len(rows))).to_list()


BITS = ["a", " ", "{", "}", "{}", "{0}", "%", "\\", "$1", "é"]  # braces and what a regex or format reads
PIECES = st.lists(st.sampled_from(BITS), max_size=6).map("".join)


@given(st.lists(PIECES, min_size=2, max_size=5), st.data())
def test_a_sentence_is_its_template_with_each_part_in_turn(pieces: list[str], data: st.DataObject) -> None:
    """Only `{}` is a place to fill (any other brace is text, as `str.split` reads it); a part
    is inserted as it is, braces and all."""
    template = "{}".join(p.replace("{}", "") for p in pieces)
    literal = template.split("{}")
    rows = data.draw(st.integers(1, 3))
    parts = [[data.draw(PIECES) for _ in range(rows)] for _ in literal[1:]]
    expected = [
        "".join(x for pair in zip(literal, [*row, ""], strict=True) for x in pair)
        for row in zip(*parts, strict=True)
    ]
    given_as = [object_array(p) if i % 2 else pl.Series(p, dtype=pl.String) for i, p in enumerate(parts)]
    assert sentences(template, *given_as).to_list() == expected


def test_a_sentence_with_a_missing_part_is_refused_not_dropped() -> None:
    with pytest.raises(ValueError, match=re.escape("a part of 'SM {}% busy' is missing")):
        sentences("SM {}% busy", object_array(["12", None]))


def test_the_busiest_pipe_of_infinite_use_reads_inf_not_the_largest_float() -> None:
    pipes = {"alu": np.array([np.inf, np.nan, np.nan]), "fma": np.array([50.0, 60.0, np.nan])}
    assert busiest_pipe(pipes, np.arange(3)).tolist() == ["alu pipe inf%", "fma pipe 60%", None]
    assert busiest_pipe({"lsu": np.array([90.0])}, np.arange(1)).tolist() == [None]  # no arithmetic pipe


@given(st.lists(st.sampled_from(["k", "long formula " * 5, "", None]), max_size=20))
def test_texts_are_the_values_whether_one_text_repeats_or_not(values: list[str | None]) -> None:
    assert texts(values).to_list() == values
    assert texts(object_array(values)).to_list() == values


def test_enums_become_their_values_and_anything_else_is_refused() -> None:
    values = object_array([Bound.MEMORY, None, "compute", Bound.LATENCY])
    assert enum_texts(values, Bound).to_list() == ["memory", None, "compute", "latency"]
    with pytest.raises(ValueError, match="'memory-ish' is no Bound"):
        enum_texts(object_array([Bound.MEMORY, "memory-ish"]), Bound)


@given(
    st.text(alphabet=st.sampled_from(["1", "2", "0", ".", ",", "%", " ", "a", "٣", "１", "𑽐"]), max_size=16)
)
def test_note_templates_are_the_same_in_python_and_polars(note: str) -> None:
    """The summary blanks a note's numbers with Polars (all notes at once) and with Python's `re`
    (a verdict's): the two must agree on what a number is."""
    polars = pl.Series([note]).str.replace_all(_NUMBER.pattern, "#").item()
    assert polars == _NUMBER.sub("#", note) == re.sub(r"[0-9]+(?:[.,][0-9]+)*", "#", note)


def test_identity_texts_are_the_tables_columns_a_missing_name_empty() -> None:
    """The launch texts stay Polars columns from the reader's table to the launch frame (no `str`
    made per launch); a missing name is "", another missing text null."""
    from dataclasses import replace

    import ncu_roof
    from ncu_roof.analysis.core import _labels, analyze
    from ncu_roof.ingest import read_input

    table = read_input(ncu_roof.example_path())
    rows = table.rows
    given = table.launches.with_columns(
        pl.Series("name", [None, *table.launches.get_column("name").to_list()[1:]], dtype=pl.String),
        pl.Series("grid", [None] * rows, dtype=pl.String),
    )
    labels = _labels(replace(table, launches=given))
    assert labels.get_column("name").to_list()[0] == "" and labels.get_column("grid").null_count() == rows
    assert labels.get_column("block").to_list() == given.get_column("block").to_list()
    launches = analyze([replace(table, launches=given)]).launches
    assert sorted(launches.get_column("name").to_list()) == sorted(labels.get_column("name").to_list())
    assert launches.get_column("grid").null_count() == rows


def test_a_frame_of_kernels_has_the_analysis_columns_in_their_order() -> None:
    import ncu_roof
    from ncu_roof.analysis.frame import frame_of

    analysis = ncu_roof.analyze(ncu_roof.example_path())
    assert frame_of(list(analysis.kernels)).columns == analysis.launches.columns
