"""ncu CSV text as blocks and rows: the pieces every CSV reader (raw, details, summary) shares.

A file may hold `==PROF==` lines, application output (both passed over) and several CSV blocks
(one per ncu run), found by their header line. A row that starts like a data row but is damaged
(wrong number of cells, an unbalanced quote, cut off, a non-integer ID or device) is never dropped
silently: `Damage` makes it an error naming the line or, with `skip_bad_rows`, a warning.
A file whose last line has no line break (ncu ends every line with one) was cut there, and what
followed (more rows, another run) is lost: that is a warning however the line reads."""

from __future__ import annotations

import csv
import itertools
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ncu_roof.errors import BadInputError

csv.field_size_limit(sys.maxsize)

_HEADER = re.compile(rb'^"?ID"?,"?Process ID"?,', re.MULTILINE)
SUMMARY_HEADER = re.compile(rb'^"?Process ID"?,"?Process Name"?,[^\n]*Invocations[^\n]*Average', re.MULTILINE)
_CSV_IDENTITY = {
    "ID": "id",
    "Process ID": "process_id",
    "Kernel Name": "name",
    "Device": "device",
    "CC": "cc",
    "Grid Size": "grid",
    "Block Size": "block",
}


@dataclass(frozen=True)
class Block:
    header: list[str]
    data: bytes  # from the header line to the next block
    line: int = 1  # the file line its header is on
    last: bool = True  # it runs to the end of the file


@dataclass
class Damage:
    """Damaged rows of one file: an error at the end, or (skip) a warning and the kernels kept."""

    path: str
    skip: bool
    rows: list[tuple[int, str]] = field(default_factory=list)
    lost_kernels: int = 0  # kernels lost beyond the damaged rows: `lose`'s, a gap's IDs, a details
    # page's launches a damaged row tainted (a count: a gap's IDs are never listed)
    notes: list[str] = field(default_factory=list)  # about the file, not a row: warnings either way
    counted: set[int] = field(default_factory=set)  # lines whose lost kernels `lose` named

    def add(self, line: int, reason: str) -> None:
        self.rows.append((line, reason))

    def lose(self, line: int, reason: str, kernels: int) -> None:
        """Damage at `line` that costs this many kernels, however many lines it spans."""
        self.add(line, reason)
        self.lost_kernels += kernels
        self.counted.add(line)

    def damaged_rows(self) -> int:
        """Kernels lost to damage: one per damaged line, or the kernels `lose` named."""
        return len({line for line, _ in self.rows} - self.counted) + self.lost_kernels

    def cut_short(self, line: int) -> None:
        """The file ends inside line `line`: more kernels (a whole run) may have followed."""
        self.notes.append(
            f"{self.path}: the text ends in the middle of line {line}: "
            "the capture may be cut short (ncu ends its output with a line break)"
        )

    def check(self) -> None:
        """Raise unless skipping: the first damaged row, with its line, and how many more."""
        if not self.rows or self.skip:
            return
        line, reason = min(self.rows)
        others = len(self.rows) - 1
        more = f" ({others} more damaged row{'s' if others != 1 else ''})" if others else ""
        raise BadInputError(
            f"{self.path}: line {line}: {reason}{more}",
            hint="repair or re-export the file; --skip-bad-rows reads the intact kernels "
            "and says what it left out",
        )

    def warnings(self, kernels: int) -> tuple[str, ...]:
        if not self.rows:
            return tuple(self.notes)
        lines = sorted({line for line, _ in self.rows})
        shown = ", ".join(str(n) for n in lines[:5]) + (", …" if len(lines) > 5 else "")
        lost = f"; {kernels} kernel{'s' if kernels != 1 else ''} left out" if kernels else ""
        return (
            f"{self.path}: skipped {len(self.rows)} damaged row{'s' if len(self.rows) != 1 else ''} "
            f"(line{'s' if len(lines) != 1 else ''} {shown}: {min(self.rows)[1]}){lost}",
            *self.notes,
        )


GAPS_SHOWN = 100  # the gaps named of a page with many (all are counted)


def check_ids(
    ids: Sequence[int] | np.ndarray,
    line_of: Callable[[int], int],
    damage: Damage,
    dropped: Sequence[int] | np.ndarray = (),
) -> None:
    """IDs missing from a run (`0, 2, 3`; page order) are lost rows (ncu numbers launches 0, 1, 2, … per run):
    damage at the row after each gap, lost kernels counted. `line_of(i)`: `ids[i]`'s line; `dropped`: per
    damaged row left out, the next row's `ids` index (`len(ids)` at the end): a gap beside one is that row."""
    if not len(ids):
        return
    listed = np.asarray(ids, dtype=np.int64)
    ordered = np.sort(listed)  # each ID once, in order (numpy's `unique` hashes: ~35 ms at 100k)
    present = ordered[np.r_[True, ordered[1:] != ordered[:-1]]]
    starts = np.r_[0, present[:-1] + 1]  # a gap runs from after an ID present (or 0) to the next
    gap = starts < present
    first, last = starts[gap], present[gap] - 1
    after = np.searchsorted(np.maximum.accumulate(listed), first, side="right")  # first ID > first
    beside = np.bincount(np.asarray(dropped, dtype=np.int64), minlength=len(listed) + 1)[after]
    beside[1:][after[1:] == after[:-1]] = 0  # a damaged row is beside one gap (IDs out of order)
    lost = np.maximum(last - first + 1 - beside, 0)
    shown = np.flatnonzero(lost)
    for g in shown[:GAPS_SHOWN].tolist():
        one = last[g] == first[g]
        what = f"ID {first[g]} is" if one else f"IDs {first[g]} to {last[g]} are"
        rows = "a lost row" if one else "lost rows"
        if beside[g]:  # some of the gap's launches are the damaged rows above
            rows = f"{beside[g]} damaged above, {lost[g]} lost row{'s' if lost[g] != 1 else ''}"
        reason = f"{what} missing before this row: {rows} (or an export filtered with -k)"
        damage.lose(line_of(int(after[g])), reason, int(lost[g]))
    damage.lost_kernels += int(lost[shown[GAPS_SHOWN:]].sum())


_DATA_START = re.compile(r'^"?[^",\s]*"?,')
_ID_START = re.compile(r'^"?\s*\d+\s*"?,"?\s*\d*\s*"?,')
_ROW_START = re.compile(r'^\s*("|\d)')  # a last line cut off right after it began
_INTEGER = re.compile(r"^\s*[0-9]{1,15}\s*$")  # ASCII digits only (pyarrow's RE2 runs it too)
_DEVICE = re.compile(r"^\s*[0-9]{1,4}\s*$")
# A launch ID has at most 8 digits: 10^8 launches would take ncu over a day to profile (≥ 1 ms of
# replay each) and fill a ~225 GB raw page (2.25 kB a row), so an ID beyond is one damaged row,
# not the start of 10^8 lost ones.
LAUNCH_ID = re.compile(r"^\s*0*[0-9]{1,8}\s*$")  # leading zeros are no digits of its value
MAX_DEVICE_INDEX = 9999  # what `_DEVICE` admits


def looks_like_data(line: str, columns: int) -> bool:
    """A row of the table rather than application output: an ID-like first cell and enough cells,
    or cells quoted as ncu quotes them (`"0"-"4343","app",…`: a damaged first cell is a damaged row)."""
    if _ID_START.match(line) or line.count('","') >= max(2, columns // 2):
        return True
    return bool(_DATA_START.match(line)) and line.count(",") >= max(2, columns // 2)


def records(block: Block, damage: Damage) -> Iterator[tuple[int, list[str]]]:
    """(file line, cells) of every data row after the header; quoted line breaks are kept,
    foreign lines passed over, damaged rows reported to `damage` (and not yielded)."""
    if block.last and b"\n" not in block.data:  # the file ends inside the header: its run's rows are lost
        damage.cut_short(block.line)
    text = block.data.decode("utf-8", "replace")
    lines, columns = text.split("\n"), len(block.header)
    least = block.header.index("Metric Value") + 1 if is_details(block.header) else columns
    widths: Counter[int] = Counter()  # cells per row: a last row without its line break and
    i = 1  # with fewer cells than most rows is cut off
    while i < len(lines):
        start, record = i, lines[i]
        i += 1
        if not record.strip() or not looks_like_data(record, columns):
            if block.last and i == len(lines) and _ROW_START.match(record):
                damage.add(block.line + start, "the last row is cut off (truncated file?)")
            elif block.last and i == len(lines) and record.strip():
                damage.cut_short(block.line + start)  # application output or `==PROF==`, cut
            continue
        while record.count('"') % 2 and i < len(lines) and i - start < 64:
            record += "\n" + lines[i]  # a line break inside a quoted name, kept as it was
            i += 1
        record, line = record.removesuffix("\r"), block.line + start
        at_end = block.last and i == len(lines) and not text.endswith("\n")
        if at_end and (record.count('"') % 2 or _cut_off(record, block, least)):
            damage.add(line, "the last row is cut off (truncated file?)")
            continue
        if record.count('"') % 2:
            damage.add(line, "unbalanced quote")
            i = start + 1
            continue
        try:
            cells = next(csv.reader([record], strict=True))
        except csv.Error as err:
            damage.add(line, f"not a valid CSV row ({err})")
            continue
        if at_end and widths and len(cells) < widths.most_common(1)[0][0]:
            damage.add(line, "the last row is cut off (truncated file?)")
            continue
        widths[len(cells)] += 1
        if at_end:  # it reads whole, but ncu ends every row with a line break: the file was cut
            damage.cut_short(block.line + i - 1)
        yield line, cells


def _cut_off(record: str, block: Block, least: int) -> bool:
    """A last row without line break: cut off if too few cells or (all quoted) not ending as ncu ends rows."""
    if block.data.startswith(b'"') and not record.endswith(('"', ",")):
        return True
    try:
        return len(next(csv.reader([record]), [])) < least
    except csv.Error:
        return True


def find_headers(raw: bytes) -> tuple[list[int], list[int]]:
    """The offsets of the header lines of the pages (raw, details: `"ID","Process ID",`) and `--print-summary`
    (`"Process ID","Process Name",…`), by one literal search for `Process ID` (every ncu CSV header has it)
    checked at its line's start (a regex scan of a 200 MB page cost 0.33 s, each further search 0.1 s)."""
    pages: list[int] = []
    summaries: list[int] = []
    pos = raw.find(b"Process ID")
    while pos != -1:
        start = raw.rfind(b"\n", 0, pos) + 1
        if _HEADER.match(raw, start) and (not pages or pages[-1] != start):
            pages.append(start)
        elif SUMMARY_HEADER.match(raw, start) and (not summaries or summaries[-1] != start):
            summaries.append(start)
        pos = raw.find(b"Process ID", pos + 1)
    return pages, summaries


def find_blocks(raw: bytes, starts: list[int]) -> list[Block]:
    """The blocks that start at these header lines (`find_headers(raw)[0]`)."""
    blocks = []
    line, counted = 1, 0
    for start, end in itertools.pairwise([*starts, len(raw)]):
        line += raw.count(b"\n", counted, start)
        counted = start
        chunk = raw[start:end]  # the file itself when it is one block from its first byte
        first_end = chunk.find(b"\n")
        first_line = chunk[: first_end if first_end != -1 else None].decode("utf-8", "replace").rstrip("\r")
        try:
            header = next(csv.reader([first_line]))
        except csv.Error:  # e.g. a NUL byte
            header = first_line.split(",")
        blocks.append(Block(header=header, data=chunk, line=line, last=end == len(raw)))
    return blocks


_DETAILS_KEYS = ("Section Name", "Metric Name", "Metric Unit", "Metric Value")


def is_details(header: list[str]) -> bool:
    return "Metric Name" in header and "Metric Value" in header


def id_problem(cell: str) -> str:
    """Why an ID cell `LAUNCH_ID` does not match is no launch's ID."""
    if cell.strip().isascii() and cell.strip().isdigit():
        return f"ID {one_cell(cell)} is beyond any capture's launches (a damaged ID?)"
    return f"ID {one_cell(cell)} is not an integer index"


def device_problem(cell: str) -> str:
    return f"Device {one_cell(cell)} is not an integer index"


def one_cell(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:39] + "…")


def unreadable_note(metric: str, text: str) -> str:
    """The note on a launch whose `metric` cell reads as no number (`units.unreadable`)."""
    return f"input: {metric} reads {one_cell(text)}, which is not a number; left out"
