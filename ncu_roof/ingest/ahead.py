"""Reading ahead: while this process loads the analysis modules (numpy, pyarrow and the package:
~0.1 s), a lone input is already being read.

A text input's bytes are read on a thread (the read releases the GIL); a report's launches by a
forked child (`ncu_roof.cores`: `ncu_report` holds the GIL), which sends them back as rows.
Whatever goes wrong ahead is left to the reader: an error is raised by `read_input` as it would
have been without reading ahead, and a child that fails only means the report is read here.
This module imports neither numpy nor the table, or reading ahead would gain nothing (its caller
loads them, and `Ahead.load_readers` what the reader needs, once the read has started).
"""

from __future__ import annotations

import importlib
import marshal
from dataclasses import dataclass
from typing import IO

from ncu_roof import cores
from ncu_roof.errors import NcuRoofError
from ncu_roof.ingest.inputs import STDIN, has_report_header, is_report, read_head, read_text_bytes
from ncu_roof.ingest.reprows import Row, report_rows

TEXT_READER_MODULES = ("pyarrow.csv", "pyarrow.compute")  # (pyarrow itself with them)


@dataclass
class Ahead:
    """One input being read: its text's bytes (a thread) or its report's rows (a child)."""

    path: str
    _text: cores.Thread[bytes] | None = None
    _child: cores.Child | None = None

    def text(self) -> bytes | None:
        """The text input's bytes (its read's error raised here); None when not read ahead."""
        if self._text is None:
            return None
        reading, self._text = self._text, None
        return reading.result()

    def rows(self) -> list[Row] | None:
        """The report's launches (once); None when the child failed or found no `ncu_report`
        (then the report is read here, and any error is raised there)."""
        if self._child is None:
            return None
        made = self._child.result()
        if made is None:
            return None
        with made:
            rows: list[Row] | None = marshal.load(made)
        return rows

    def load_readers(self) -> None:
        """Import what reading this input needs, while it is read: for a text, pyarrow with its CSV
        parser and compute functions (~0.13 s; every text reader uses them, and a big page's two
        parsing threads would import them at once, one waiting on the other)."""
        if self._text is not None:
            for name in TEXT_READER_MODULES:
                importlib.import_module(name)

    def close(self) -> None:
        """Reap the child (stopped first if it is still reading: the caller failed before it
        needed the rows)."""
        if self._child is not None:
            self._child.close()


def read_ahead(path: str) -> Ahead | None:
    """Start reading one input (not stdin); None when it cannot be read ahead (its reader then
    says why)."""
    if path == STDIN:
        return None
    try:
        head = read_head(path)
    except NcuRoofError:  # the reader reports it, with its hint
        return None
    if is_report(path, head):
        if not has_report_header(path, head):
            return None  # refused by its reader without a look inside
        child = cores.start(lambda out: _dump_rows(path, out))
        return Ahead(path, _child=child) if child is not None else None
    return Ahead(path, _text=cores.on_thread(lambda: read_text_bytes(path), "ncu-roof-read-ahead"))


def _dump_rows(path: str, out: IO[bytes]) -> None:
    """The rows (dicts of texts, numbers and None) in `marshal`'s format: built in, no import."""
    marshal.dump(report_rows(path), out)
