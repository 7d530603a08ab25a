"""Units and numbers as ncu prints them, turned into SI floats.

ncu spells units differently across releases (`nsecond`/`ns`, `cycle/nsecond`/`Ghz`,
`Gbyte/second`/`Gbyte/s`) and formats numbers by the process locale (`1,234.5`, `1.234,5`). Each
spelling maps onto one SI scale, never by a guess: an unknown unit or an ambiguous number style is
an error, never a silent factor of 1000."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Sequence
from enum import Enum
from functools import lru_cache
from typing import TYPE_CHECKING

from ncu_roof.errors import BadInputError, NcuRoofError, UsageError

if TYPE_CHECKING:  # `--help` and `gpus` never load numpy, nor `predict` pyarrow
    import numpy as np
    import pyarrow as pa

_HERTZ = {"hz": 1.0, "khz": 1e3, "Khz": 1e3, "Mhz": 1e6, "MHz": 1e6, "Ghz": 1e9, "GHz": 1e9}
_TIME_HERTZ = _HERTZ | {  # and times, `nsecond` and `ns` alike
    prefix + word: scale
    for prefix, scale in (("", 1.0), ("m", 1e-3), ("u", 1e-6), ("n", 1e-9))
    for word in ("second", "s")
}
_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
# the counted things ncu prints (singular or plural, with an SI prefix): `Kbyte`, `sectors`, `inst`
_COUNT_RE = re.compile(
    r"^(?P<prefix>[KkMGTP]?)(?P<word>byte|inst|sector|cycle|thread|warp|block|request|wavefront|register"
    r"|pass|SM|cluster|sample|kernel)s?$"
)


@lru_cache(maxsize=1024)  # a report's launches share their units: each worked out once
def si_factor(unit: str) -> float:
    """Multiplier taking a value printed in `unit` to SI: time to seconds, frequency to hertz, bytes
    to bytes, bandwidth to byte/s; ratios (`inst/cycle`) and percentages keep their scale (1):
    >>> si_factor("usecond"), si_factor("Ghz"), si_factor("Gbyte/second"), si_factor("cycle/nsecond")
    (1e-06, 1000000000.0, 1000000000.0, 1000000000.0)
    """
    numerator, _, denominator = unit.strip().partition("/")
    # ``, `%`, `/cycle`, `/second`, `%/byte`, and ncu 2025.3's `1/cycle`, `1/s`: a bare, percent or
    # unit numerator is a plain count (factor 1).
    factor = 1.0 if numerator in ("", "%", "1") else _word_factor(numerator, unit)
    if denominator:
        factor /= _word_factor(denominator, unit)
    return factor


# Metrics whose base unit is not 1 in SI. An ncu older than the report it exports prints these
# with an empty unit and the raw base value (ncu 2024.1 on a 2025.2 report: `gpu__time_duration.sum`
# = "" / 65856, which is nanoseconds); read as unitless they would be 1e9 times too long.
_BASE_UNITS = {"gpu__time_duration": "nsecond"}


def effective_unit(metric: str, unit: str) -> str:
    """The unit a value is in: as printed, or the metric's ncu base unit when printed empty."""
    return unit if unit.strip() else _BASE_UNITS.get(metric.split(".", 1)[0], unit)


def _word_factor(word: str, unit: str) -> float:
    if word in _TIME_HERTZ:
        return _TIME_HERTZ[word]
    if (match := _COUNT_RE.match(word)) is None:
        raise BadInputError(
            f"unknown unit {unit!r}",
            hint="export with `--print-units base` so every value is in ncu's base unit",
        )
    return _SI[match["prefix"]]


class NumberStyle(Enum):
    """How a file writes numbers: ncu follows the locale of the process that printed them."""

    C = "C"  # 1234567.5
    EN = "en"  # 1,234,567.5
    DE = "de"  # 1.234.567,5


_EN_SURE = re.compile(r"^-?\d{1,3}(,\d{3})+\.\d+$|^-?\d{1,3}(,\d{3}){2,}$")
_DE_SURE = re.compile(r"^-?\d{1,3}(\.\d{3})+,\d+$|^-?\d{1,3}(\.\d{3}){2,}$|^-?\d+,(\d{1,2}|\d{4,})$")
_POINT_DECIMAL = re.compile(r"^-?\d+\.(\d{1,2}|\d{4,})$")
_ONE_COMMA_GROUP = re.compile(r"^-?\d{1,3},\d{3}$")
_ONE_POINT_GROUP = re.compile(r"^-?\d{1,3}\.\d{3}$")
_BARE_BIG_INT = re.compile(r"^-?\d{4,}$")
_PATTERNS = (_EN_SURE, _DE_SURE, _POINT_DECIMAL, _ONE_COMMA_GROUP, _ONE_POINT_GROUP, _BARE_BIG_INT)


_CONTRADICTS = {  # the numbers a file written in a style (forced by --number-locale) never has
    NumberStyle.C: (_EN_SURE, _DE_SURE, _ONE_COMMA_GROUP),
    NumberStyle.EN: (_DE_SURE,),
    NumberStyle.DE: (_EN_SURE, _POINT_DECIMAL),
}


def detect_number_style(cells: Iterable[object], forced: NumberStyle | None) -> NumberStyle:
    """The number style of one file, from its numeric-looking cells; `forced` (`--number-locale`) where the
    file's own numbers do not contradict it. The right-most separator of a number that has both is the decimal
    mark; two or more groups of three digits mark the grouping character; a comma followed by other than three
    digits is a decimal comma; conflicting evidence raises. A lone `1,234` is en_US grouping: ncu prints
    fractions with 2 (details) or 6 (raw, auto units) decimals, never 3. The cells (stripped, those without a
    digit passed over) are searched by Polars' regex engine (5x `re` on a raw page's 20,000 distinct cells;
    its `\\d` is any Unicode digit as `re`'s is; the patterns are anchored: a search is a match)."""
    import polars as pl

    cell = pl.col("cell").str.strip_chars(_SPACE)
    column = pl.Series("cell", cell_texts(cells), dtype=pl.String).to_frame()
    text = column.select(cell.filter(cell.str.contains(r"\d"))).get_column("cell")
    marked = text.str.contains(f"[{GROUP_MARKS}]")
    if marked.any():  # `GROUP_MARKS` between digits dropped, by `re` (Polars' regex has no look-around)
        ungrouped = [re.sub(rf"(?<=\d)[{GROUP_MARKS}](?=\d)", "", t) for t in text.filter(marked).to_list()]
        text = pl.concat([text.filter(~marked), pl.Series("cell", ungrouped, dtype=pl.String)])
    searched = [pl.col("cell").str.contains(p.pattern).any().alias(str(i)) for i, p in enumerate(_PATTERNS)]
    seen = dict(zip(_PATTERNS, text.to_frame().select(searched).row(0), strict=True)).__getitem__

    if forced is not None:
        if any(seen(pattern) for pattern in _CONTRADICTS[forced]):
            raise BadInputError(
                f"numbers in this file are not written in the {forced.value} style forced by --number-locale",
                hint="drop --number-locale (the style is detected per file) or pass the right one",
            )
        return forced
    en, de, point = seen(_EN_SURE), seen(_DE_SURE), seen(_POINT_DECIMAL)
    if de:
        style, ambiguous = NumberStyle.DE, en or point
    elif en or seen(_ONE_COMMA_GROUP):
        style, ambiguous = NumberStyle.EN, not en and (seen(_ONE_POINT_GROUP) or seen(_BARE_BIG_INT))
    else:
        style, ambiguous = NumberStyle.C, seen(_ONE_POINT_GROUP) and not (point or seen(_BARE_BIG_INT))
    if ambiguous:
        raise BadInputError(
            "cannot tell whether ',' or '.' is the decimal mark in this file",
            hint="pass --number-locale C|en|de, or re-export with `LC_ALL=C ncu --import ...`",
        )
    return style


_SPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())  # what `str.strip` strips


def missing_cell(cell: object) -> bool:
    """None or NaN of any float type (what pandas' `isna` counts as missing in an object column)."""
    return cell is None or (isinstance(cell, numbers.Real) and cell != cell)


def cell_number(cell: object) -> float:
    """A cell's number, NaN where none (as `pandas.to_numeric` coerces: ASCII digits only, no `1_000`)."""
    if isinstance(cell, str) and not (cell.isascii() and "_" not in cell):
        return math.nan
    try:
        return float(cell)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


# Digit-group marks of every locale that are never a decimal mark: U+202F and U+00A0 (fr_FR:
# `1 234,5`), U+2019 and the apostrophe (de_CH: `1’234.5`). With the style's own mark (`,` for en,
# `.` for de) they are the groups a number may have; elsewhere (`1,2,3` in en) it is no number.
GROUP_MARKS = "\u202f\u00a0\u2019'"
_MARKS = {NumberStyle.C: ("", "."), NumberStyle.EN: (",", "."), NumberStyle.DE: (".", ",")}
_INFINITE = r"^[-+]?(?i:inf|infinity)$"  # a non-finite value is read as one (and then excluded, noted)
# What ncu writes for a value it has not: missing, never a note.
_MISSING_WORDS = frozenset({"", "n/a", "nan", "-nan", "(!) nan", "(!) n/a", "-", "--"})


def cell_texts(cells: Iterable[object]) -> list[str | None]:
    """Each cell as text, None where missing (`missing_cell`)."""
    return [None if missing_cell(v) else str(v) for v in cells]


def parse_numbers(cells: Iterable[object] | pa.Array | pa.ChunkedArray, style: NumberStyle) -> np.ndarray:
    """Cells as printed by ncu (a pyarrow string column, or Python values) → float64, NaN where not
    a number (`n/a`, `nan`, empty: never 0), in pyarrow's string kernels (4x a pandas `str` +
    `to_numeric` pass). Plain numbers (a `--print-units base` raw page) are one cast; else a number
    must be one in the file's style (digit groups of three, its decimal mark), its grouping marks
    removed; the rest (`n/a`, `(!) nan`, `1,2,3`, garbage) is missing (`unreadable`: not ncu's words)."""
    import numpy as np
    import polars as pl
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = cells
    if not isinstance(arr, pa.Array | pa.ChunkedArray):
        arr = pl.Series(cell_texts(arr), dtype=pl.String).to_arrow()
    if style is not NumberStyle.DE:  # a cast reads `.` as the decimal mark, and fails on `,`
        try:
            fast = pl.Series(pc.cast(arr, pa.float64())).to_numpy()
        except pa.ArrowInvalid:
            fast = None
        if fast is not None and not np.isinf(fast).any():
            return fast
    group, decimal = _MARKS[style]
    marks, point = re.escape(group + GROUP_MARKS), re.escape(decimal)
    number = rf"^[-+]?(?:(?:\d{{1,3}}(?:[{marks}]\d{{3}})+|\d+)(?:{point}\d*)?|{point}\d+)(?:[eE][-+]?\d+)?$"
    arr = pc.utf8_trim_whitespace(arr)
    numeric = pc.or_(pc.match_substring_regex(arr, number), pc.match_substring_regex(arr, _INFINITE))
    arr = pc.replace_substring_regex(arr.filter(numeric), f"[{marks}]", "")
    if decimal != ".":
        arr = pc.replace_substring(arr, decimal, ".")
    out = np.full(len(numeric), np.nan)
    out[pl.Series(numeric).fill_null(False).to_numpy()] = pl.Series(pc.cast(arr, pa.float64())).to_numpy()
    return out


def unreadable(
    cells: Sequence[object] | pa.Array | pa.ChunkedArray, values: np.ndarray
) -> list[tuple[int, str]]:
    """(position, text) of the cells that read as no number (`values` NaN) and are none of ncu's
    words for a missing value: damaged or hand-edited cells, which a note names."""
    import numpy as np
    import polars as pl

    positions = np.flatnonzero(np.isnan(values))
    # of an Arrow column, only the missing cells converted (positions through Polars: a numpy
    # array handed to pyarrow imports pandas)
    picked = (
        [cells[i] for i in positions.tolist()]
        if isinstance(cells, Sequence)
        else cells.take(pl.Series(positions).to_arrow()).to_pylist()
    )
    return [
        (position, text)
        for position, text in zip(positions.tolist(), cell_texts(picked), strict=True)
        if text is not None and text.strip().lower() not in _MISSING_WORDS
    ]


class Dimension(Enum):
    """What a user-typed quantity measures; decides which units it accepts."""

    FLOP = "FLOP"
    BYTE = "B"
    FLOP_PER_S = "FLOP/s"
    BYTE_PER_S = "B/s"
    FLOP_PER_BYTE = "FLOP/B"
    NUMBER = ""


_QUANTITY = re.compile(r"^\s*(?P<num>[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?)\s*(?P<unit>.*?)\s*$")
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_UNIT_WORDS = {
    Dimension.FLOP: ("FLOPs", "FLOP", "flops", "flop"),
    Dimension.BYTE: ("bytes", "byte", "B"),
    Dimension.FLOP_PER_S: ("FLOP/s", "FLOPs/s", "flop/s", "FLOPS"),
    Dimension.BYTE_PER_S: ("B/s", "byte/s", "bytes/s", "Bps"),
    Dimension.FLOP_PER_BYTE: ("FLOP/B", "FLOPs/B", "flop/byte", "FLOP/byte"),
    Dimension.NUMBER: (),
}


def parse_quantity(text: str | float | int, dimension: Dimension) -> float:
    """`2.039TB/s` → 2.039e12, `10M` → 1e7, `100GFLOP/s` → 1e11; a wrong unit is an error. A bare
    number or a number with only an SI prefix is taken in the dimension's base unit."""
    from decimal import Decimal

    example = f"write e.g. 1e7, 10M or 2.5G{dimension.value}"
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise UsageError(f"not a number: {text!r}", hint=example)
    if isinstance(text, (int, float)):
        value = float(Decimal(text))  # an int too large for a float is infinite, not an OverflowError
        if not math.isfinite(value):
            raise UsageError(f"{text!r}: not a finite number", hint=example)
        return value
    if (match := _QUANTITY.match(text)) is None:
        raise UsageError(f"not a number: {text!r}", hint=example)
    number, unit = Decimal(match["num"]), match["unit"]
    for prefix, scale in (*_BINARY.items(), *_SI.items()):  # a binary prefix only before a unit word
        rest = unit.removeprefix(prefix)
        if unit.startswith(prefix) and (rest in _UNIT_WORDS[dimension] or (rest == "" and prefix in _SI)):
            value = float(number * Decimal(scale))
            if not math.isfinite(value):
                raise UsageError(f"{text!r}: not a finite number (too large)", hint=example)
            return value
    accepted = ", ".join(_UNIT_WORDS[dimension]) or "no unit"
    raise UsageError(
        f"{text!r}: unit {unit!r} is not a {dimension.name.lower().replace('_', ' ')}",
        hint=f"accepted units: {accepted}, with an optional SI prefix (k, M, G, T, P)",
    )


def toml_quantity(value: object, dimension: Dimension, where: str, hint: str, wrong_type: str) -> float:
    """A TOML file's value (a string with units or a plain number, never a boolean) as `parse_quantity` reads
    it, each error a `BadInputError` naming `where` (a wrong type: `wrong_type` of `where`/`value`/`unit`)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise BadInputError(wrong_type.format(where=where, value=value, unit=dimension.value), hint=hint)
    try:
        return parse_quantity(value, dimension)
    except NcuRoofError as err:
        raise BadInputError(f"{where}: {err.message}", hint=err.hint) from None
