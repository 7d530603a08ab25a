"""Units and number styles as ncu prints them (ncu_roof.base.units)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.base.units import (
    Dimension,
    NumberStyle,
    detect_number_style,
    effective_unit,
    parse_numbers,
    parse_quantity,
    si_factor,
)
from ncu_roof.errors import BadInputError, NcuRoofError, UsageError


@pytest.mark.parametrize(
    ("unit", "factor"),
    [
        ("nsecond", 1e-9),
        ("ns", 1e-9),
        ("usecond", 1e-6),
        ("us", 1e-6),
        ("msecond", 1e-3),
        ("ms", 1e-3),
        ("second", 1.0),
        ("byte", 1.0),
        ("Kbyte", 1e3),
        ("Mbyte", 1e6),
        ("Gbyte", 1e9),
        ("Tbyte", 1e12),
        ("byte/second", 1.0),
        ("byte/s", 1.0),
        ("Kbyte/second", 1e3),
        ("Gbyte/second", 1e9),
        ("Gbyte/s", 1e9),
        ("Tbyte/second", 1e12),
        ("cycle/nsecond", 1e9),
        ("cycle/usecond", 1e6),
        ("cycle/second", 1.0),
        ("hz", 1.0),
        ("Mhz", 1e6),
        ("Ghz", 1e9),
        ("inst", 1.0),
        ("inst/cycle", 1.0),
        ("%", 1.0),
        ("", 1.0),
        ("sector", 1.0),
        ("sectors", 1.0),
        ("Ksector", 1e3),
        ("sector/second", 1.0),
        ("byte/cycle", 1.0),
        ("register/thread", 1.0),
        # ncu 2024.1 exporting a 2025.1 --set full report prints these (no numerator word).
        ("/cycle", 1.0),
        ("/second", 1.0),
        ("/usecond", 1e6),
        ("%/byte", 1.0),
    ],
)
def test_si_factor(unit: str, factor: float) -> None:
    assert si_factor(unit) == pytest.approx(factor, rel=1e-12)


@pytest.mark.parametrize("unit", ["furlong", "Xbyte", "byte/fortnight", "Qhz", "bytes per s"])
def test_unknown_unit_is_an_error_with_a_hint(unit: str) -> None:
    with pytest.raises(BadInputError, match="unknown unit") as info:
        si_factor(unit)
    assert isinstance(info.value, NcuRoofError)
    assert unit in info.value.message
    assert info.value.hint


def test_empty_unit_of_a_duration_is_ncu_base_nanoseconds() -> None:
    # ncu 2024.1 printing a 2025.2 report: gpu__time_duration.sum with unit "" and value 65856.
    assert effective_unit("gpu__time_duration.sum", "") == "nsecond"
    assert effective_unit("gpu__time_duration.sum", "usecond") == "usecond"
    assert effective_unit("dram__bytes.sum", "") == ""


def _parse(values: list[str], style: NumberStyle) -> list[float]:
    parsed: list[float] = parse_numbers(pd.Series(values, dtype=object), style).tolist()
    return parsed


def test_parse_en_de_c_give_the_same_numbers() -> None:
    assert _parse(["1,234,567.5", "12", "0.25", "-3,000"], NumberStyle.EN) == [1234567.5, 12, 0.25, -3000]
    assert _parse(["1.234.567,5", "12", "0,25", "-3.000"], NumberStyle.DE) == [1234567.5, 12, 0.25, -3000]
    assert _parse(["1234567.5", "12", "0.25", "-3000", "1e+09", " 7 "], NumberStyle.C) == [
        1234567.5,
        12,
        0.25,
        -3000,
        1e9,
        7,
    ]


@pytest.mark.parametrize("style", list(NumberStyle))
@pytest.mark.parametrize("missing", ["n/a", "N/A", "nan", "-nan", "", "(!) nan", "  "])
def test_missing_values_are_nan_never_zero(style: NumberStyle, missing: str) -> None:
    value = _parse([missing], style)[0]
    assert math.isnan(value)


def test_parse_keeps_the_order_and_gives_float64() -> None:
    out = parse_numbers(pd.Series(["1", "n/a", "2.5"], index=[7, 9, 3]), NumberStyle.C)
    assert out.dtype == "float64"
    assert out[0] == 1.0 and math.isnan(out[1]) and out[2] == 2.5


@pytest.mark.parametrize(
    ("cells", "style"),
    [
        (["1,234,567.5", "12"], NumberStyle.EN),
        (["935,474,537.04"], NumberStyle.EN),
        (["13,485", "9,495.42"], NumberStyle.EN),
        (["21,760", "7"], NumberStyle.EN),
        (["1.234.567,5", "12"], NumberStyle.DE),
        (["8,33", "112.044.038"], NumberStyle.DE),
        (["0,5"], NumberStyle.DE),
        (["1234567.5", "12", "0.25"], NumberStyle.C),
        (["1410000000", "3.5"], NumberStyle.C),
        (["12", "7", "n/a"], NumberStyle.C),
    ],
)
def test_detect_number_style(cells: list[str], style: NumberStyle) -> None:
    assert detect_number_style(pd.Series(cells), None) is style


@pytest.mark.parametrize(
    "cells",
    [
        ["1.234,5", "1,234.5"],  # both decimal marks, each sure of itself
        ["1.234"],  # one group of three after a point: 1234 (de) or 1.234 (C)?
        ["1,234", "5678"],  # comma group next to a bare big int
    ],
)
def test_ambiguous_number_style_is_an_error_with_a_hint(cells: list[str]) -> None:
    with pytest.raises(BadInputError, match="decimal mark") as info:
        detect_number_style(pd.Series(cells), None)
    assert "--number-locale" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("cells", "forced", "contradicted"),
    [
        (["1,234.5", "1.234"], NumberStyle.EN, False),  # `1.234` is ambiguous, not against en
        (["1.234,5"], NumberStyle.EN, True),
        (["1.234,5", "1,234"], NumberStyle.DE, False),
        (["1,234.5"], NumberStyle.DE, True),
        (["3.25"], NumberStyle.DE, True),  # a decimal point
        (["1.234", "3.25"], NumberStyle.C, False),
        (["1,234"], NumberStyle.C, True),  # a comma group
        (["1.234,5"], NumberStyle.C, True),
    ],
)
def test_forced_number_style_is_kept_unless_the_numbers_contradict_it(
    cells: list[str], forced: NumberStyle, contradicted: bool
) -> None:
    if not contradicted:
        assert detect_number_style(pd.Series(cells), forced) is forced
        return
    with pytest.raises(BadInputError, match=f"not written in the {forced.value} style"):
        detect_number_style(pd.Series(cells), forced)


def _format(value: float, style: NumberStyle) -> str:
    text = f"{value:,.3f}" if style is not NumberStyle.C else f"{value:.3f}"
    if style is NumberStyle.DE:
        text = text.replace(",", "_").replace(".", ",").replace("_", ".")
    return text


@given(
    value=st.floats(min_value=-1e15, max_value=1e15, allow_nan=False).map(lambda v: round(v, 3)),
    style=st.sampled_from(list(NumberStyle)),
)
def test_format_then_parse_round_trips(value: float, style: NumberStyle) -> None:
    text = _format(value, style)
    assert _parse([text], style)[0] == pytest.approx(value, rel=1e-12, abs=1e-9)


@given(st.integers(min_value=1000, max_value=10**15), st.integers(min_value=0, max_value=999))
def test_detection_recognizes_formatted_numbers(whole: int, frac: int) -> None:
    value = whole + frac / 1000  # >= 1000: always printed with a grouping mark
    for style in (NumberStyle.EN, NumberStyle.DE):
        assert detect_number_style(pd.Series([_format(value, style), "12"]), None) is style


@pytest.mark.parametrize(
    ("text", "dimension", "expected"),
    [
        ("2.039TB/s", Dimension.BYTE_PER_S, 2.039e12),
        ("10M", Dimension.FLOP, 1e7),
        ("100GFLOP/s", Dimension.FLOP_PER_S, 1e11),
        ("20 GB/s", Dimension.BYTE_PER_S, 2e10),
        ("1KiB", Dimension.BYTE, 1024.0),
        ("0.5", Dimension.FLOP_PER_BYTE, 0.5),
        ("1e7", Dimension.NUMBER, 1e7),
        (3, Dimension.FLOP, 3.0),
    ],
)
def test_parse_quantity(text: str | int, dimension: Dimension, expected: float) -> None:
    assert parse_quantity(text, dimension) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "dimension"),
    [("2TB/s", Dimension.FLOP), ("abc", Dimension.FLOP), ("5 furlongs", Dimension.BYTE)],
)
def test_parse_quantity_rejects_wrong_units(text: str, dimension: Dimension) -> None:
    with pytest.raises(UsageError) as info:
        parse_quantity(text, dimension)
    assert info.value.hint


_PREFIXES = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


@given(
    mantissa=st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False),
    prefix=st.sampled_from(sorted(_PREFIXES)),
    dimension=st.sampled_from([Dimension.FLOP, Dimension.BYTE, Dimension.FLOP_PER_S, Dimension.BYTE_PER_S]),
)
def test_parse_quantity_round_trips(mantissa: float, prefix: str, dimension: Dimension) -> None:
    unit = {"FLOP": "FLOP", "B": "B", "FLOP/s": "FLOP/s", "B/s": "B/s"}[dimension.value]
    text = f"{mantissa!r}{prefix}{unit}"
    assert parse_quantity(text, dimension) == pytest.approx(mantissa * _PREFIXES[prefix], rel=1e-12)
