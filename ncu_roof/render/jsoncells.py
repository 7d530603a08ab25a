"""JSON text made a column at a time: numbers as `json.dumps` writes them, sparse maps, objects
from templates filled per row, constant slots folded, rows joined once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any

import numpy as np

from ncu_roof.analysis.columns import identity_codes, number_texts
from ncu_roof.analysis.model import bit_codes

encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def numbers_text(values: np.ndarray) -> list[str]:
    """Numbers (NaN for missing) as `json.dumps` writes them; NaN and ±inf as null. A column of
    few distinct values (a device's roofs, repeated launches) has each encoded once."""
    return number_texts(np.asarray(values, dtype="float64"), _encode_numbers)


def _encode_numbers(numbers: np.ndarray) -> list[str]:
    finite = np.isfinite(numbers)
    if not finite.any():
        return ["null"] * len(numbers)
    cells = numbers.astype(object)
    cells[~finite] = None
    return encode(cells.tolist())[1:-1].split(", ")  # numbers and null never hold ", "


def flag_texts(values: list[bool]) -> list[str]:
    return ["true" if v else "false" for v in values]


def sparse_texts(arrays: Mapping[str, np.ndarray], n: int) -> list[str]:
    """Per launch, an object of the keys whose value is not NaN (sparse maps): one template per
    pattern of present keys, filled for the launches with that pattern."""
    if not arrays:
        return ["{}"] * n
    names = list(arrays)
    texts = [numbers_text(a) for a in arrays.values()]
    present = np.column_stack([~np.isnan(a) for a in arrays.values()])
    codes = _pattern_codes(present)
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1]])
    out: list[str] = [""] * n
    for rows in np.split(order, starts[1:]):
        keys = np.flatnonzero(present[rows[0]]).tolist()
        template = object_template({names[i]: "%s" for i in keys})
        at = rows.tolist()
        fill(out, at, template, [[texts[i][j] for j in at] for i in keys])
    return out


def by_pattern(records: list[Any], pattern: Callable[[Any], Hashable]) -> dict[Hashable, list[int]]:
    """Rows grouped by the shape of their record (its keys): one template per shape."""
    rows: dict[Hashable, list[int]] = {}
    for j, record in enumerate(records):
        rows.setdefault(pattern(record), []).append(j)
    return rows


def fill(out: list[str], rows: list[int], template: str, cells: Sequence[list[str]]) -> None:
    """out[j] = the template filled with row j's cells, for the given rows."""
    for j, parts in zip(rows, zip(*cells, strict=True) if cells else [()] * len(rows), strict=True):
        out[j] = template % parts


def object_template(fields: Mapping[str, str]) -> str:
    """A JSON object's text with `%s` where each value goes (or the value's own text)."""
    return "{" + ", ".join(f"{encode_basestring(k)}: {v}" for k, v in fields.items()) + "}"


def float_texts(values: list[float | None]) -> list[str]:
    return numbers_text(np.array([np.nan if v is None else v for v in values], dtype="float64"))


def per_distinct(records: list[Any], texts: Callable[[list[Any]], list[str]]) -> list[str]:
    """`texts` of the distinct records (by identity: launches like each other share one record),
    spread back to every launch."""
    first, codes = identity_codes(records)
    made = np.empty(len(first), dtype=object)
    made[:] = texts([records[j] for j in first.tolist()])
    out: list[str] = made[codes].tolist()
    return out


def _pattern_codes(present: np.ndarray) -> np.ndarray:
    """One integer per row of a boolean matrix, equal for equal rows."""
    if present.shape[1] <= 62:
        return bit_codes(list(present.T))
    codes: np.ndarray = np.unique(present, axis=0, return_inverse=True)[1].ravel()
    return codes


def fold_constants(template: str, cells: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """A slot whose text is the same in every row (the input, the device, a shared recipe, a
    counter no launch has) folded into the literal text around it: the literals before, between
    and after the varying slots, and the varying slots. (Equal texts are one object here,
    `number_texts` and `shared_texts` make them so: `count` finds them by identity.)"""
    around = template.split("%s")
    assert len(around) == len(cells) + 1 and "%" not in "".join(around)
    literals = [around[0]]
    varying = []
    for texts, literal in zip(cells, around[1:], strict=True):
        if texts[-1] == texts[0] and texts.count(texts[0]) == len(texts):  # (the last tells most apart)
            literals[-1] += texts[0] + literal
        else:
            varying.append(texts)
            literals.append(literal)
    return literals, varying


def joined_rows(literals: list[str], varying: list[list[str]], count: int) -> str:
    """`count` rows, each its literals and cells in turn, `, `-separated: laid out row by row in one
    list (each slot's texts put in by one strided slice assignment) and joined once (`%`-formatting
    a template per row cost 12x as much, a numpy object grid 2-3x)."""
    width = 2 * len(varying) + 1
    parts = [", " + literals[0]] * (count * width)
    parts[0] = literals[0]
    for i, texts in enumerate(varying):
        parts[2 * i + 1 :: width] = texts
        parts[2 * i + 2 :: width] = [literals[i + 1]] * count
    return "".join(parts)
