"""Arrow arrays to numpy and back, through their buffers (the Arrow columnar format).

pyarrow's own conversions (`to_numpy`, `np.asarray`, `pa.array` of a list or an object array)
import pandas on first use, ~0.35 s before any work: reading a CSV page through these instead
leaves pandas unloaded. Each function reads or writes the format's buffers as the Arrow spec
lays them out: a validity bitmap (one bit per value, least significant bit first; absent when
nothing is null), then the values (booleans as bits), or, for text, int32 offsets and UTF-8 bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa


def _one_chunk(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    import pyarrow as pa

    if not isinstance(values, pa.ChunkedArray):
        return values
    # (combining no chunks makes its empty array through `pa.array`, which imports pandas)
    return values.combine_chunks() if values.num_chunks else pa.nulls(0, values.type)


def _bits(buffer: pa.Buffer, offset: int, length: int) -> np.ndarray:
    """A bitmap's bits `offset … offset + length` as booleans."""
    packed = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(packed, count=offset + length, bitorder="little")[offset:].astype(bool)


def _valid(array: pa.Array) -> np.ndarray | None:
    """Where the array holds a value (None when it holds one everywhere)."""
    if array.null_count == 0:
        return None
    return _bits(array.buffers()[0], array.offset, len(array))


def _of_type(values: pa.Array | pa.ChunkedArray, kind: pa.DataType, reader: str) -> pa.Array | None:
    """The column as one array of `kind`; None when it holds no value (empty, or all null)."""
    array = _one_chunk(values)
    if array.type != kind:
        raise TypeError(f"{reader} of {array.type}")
    return None if array.null_count == len(array) else array


def float_values(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A float64 column as float64, NaN where null (a read-only view when nothing is null)."""
    import pyarrow as pa

    array = _of_type(values, pa.float64(), "float_values")
    if array is None:
        return np.full(len(values), np.nan)
    n = len(array)
    data = np.frombuffer(array.buffers()[1], dtype=np.float64, count=array.offset + n)[array.offset :]
    valid = _valid(array)
    if valid is None:
        data.flags.writeable = False  # a view of the Arrow buffer, as pyarrow's own `to_numpy` gives
        return data
    out = data.copy()
    out[~valid] = np.nan
    return out


def bool_values(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean column as a numpy bool array, False where null."""
    import pyarrow as pa

    array = _of_type(values, pa.bool_(), "bool_values")
    if array is None:
        return np.zeros(len(values), dtype=bool)
    out = _bits(array.buffers()[1], array.offset, len(array))
    valid = _valid(array)
    return out if valid is None else out & valid


def text_values(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A text column as an object array of str, None where null; each distinct text one object
    (launches repeat their names: 100,000 rows hold a few hundred texts)."""
    import pyarrow.compute as pc

    encoded = _one_chunk(pc.dictionary_encode(values))
    words = np.empty(len(encoded.dictionary) + 1, dtype=object)  # the last one: None, for nulls
    words[:-1] = encoded.dictionary.to_pylist()
    indices = encoded.indices
    if len(indices) == 0:
        return np.empty(0, dtype=object)
    codes = np.frombuffer(indices.buffers()[1], dtype=np.int32, count=indices.offset + len(indices))
    codes = codes[indices.offset :]
    valid = _valid(indices)
    if valid is not None:
        codes = np.where(valid, codes, len(words) - 1)
    texts: np.ndarray = words[codes]
    return texts


def string_array(texts: Sequence[str | None]) -> pa.Array:
    """Python texts (None for null) as an Arrow string array (large_string past 2 GiB of text)."""
    import pyarrow as pa

    encoded = [b"" if t is None else t.encode("utf-8") for t in texts]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    wide = offsets[-1] >= 2**31
    kind = pa.large_string() if wide else pa.string()
    offset_buffer = pa.py_buffer(offsets if wide else offsets.astype(np.int32))
    missing = np.fromiter((t is None for t in texts), dtype=bool, count=len(encoded))
    validity = pa.py_buffer(np.packbits(~missing, bitorder="little")) if missing.any() else None
    return pa.Array.from_buffers(
        kind, len(encoded), [validity, offset_buffer, pa.py_buffer(b"".join(encoded))], int(missing.sum())
    )


def bool_array(mask: np.ndarray) -> pa.Array:
    """A numpy bool array as an Arrow boolean array (no nulls)."""
    import pyarrow as pa

    flags = np.asarray(mask, dtype=bool)
    bits = pa.py_buffer(np.packbits(flags, bitorder="little"))
    return pa.Array.from_buffers(pa.bool_(), len(flags), [None, bits], 0)


def float_array(values: Sequence[float | None] | np.ndarray) -> pa.Array:
    """Numbers (None or NaN for null) as an Arrow float64 array."""
    import pyarrow as pa

    given = values if isinstance(values, np.ndarray) else [np.nan if v is None else v for v in values]
    numbers = np.asarray(given, dtype=np.float64)
    missing = np.isnan(numbers)
    validity = pa.py_buffer(np.packbits(~missing, bitorder="little")) if missing.any() else None
    data = pa.py_buffer(np.where(missing, 0.0, numbers))
    return pa.Array.from_buffers(pa.float64(), len(numbers), [validity, data], int(missing.sum()))


def int_array(values: np.ndarray) -> pa.Array:
    """Whole numbers as an Arrow int64 array (no nulls)."""
    import pyarrow as pa

    numbers = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(numbers), [None, pa.py_buffer(numbers)], 0)
