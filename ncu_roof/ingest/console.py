"""ncu console text: what `ncu ./app` prints (the details page) and `--print-summary` tables, in every layout
seen in real captures (2020–2025):

* kernel lines `NAME (GX, GY, GZ)x(BX, BY, BZ), Context C, Stream S, Device D, CC X.Y`, the
  older `NAME, 2022-Dec-04 20:05:20, Context 1, Stream 7`, and the summaries'
  `NAME (…)x(…), Device 0, CC 8.9, Invocations 4` / `NAME, Block Size 512, Grid Size 256,
  Device 0, 1 invocations`; a `Device N` line above kernel lines (`--print-summary per-gpu`);
* `Section: …` tables ruled by dashes, with or without a `Metric Name …` title row, one value
  column (details) or Minimum / Maximum / Average (summaries: the Average is read, and a kernel
  of `Invocations N` is N launches of it);
* section labels of every release ("Memory [%]", "Memory Throughput", "SOL DRAM", "SM [%]",
  "Compute (SM) Throughput", …) or metric names, mapped to the metric names the recipe reads;
* `==PROF==` lines, application output, CPU call stacks, NVTX stacks and rule paragraphs
  anywhere in between (passed over); `(!) nan`, `n/a`, thousands separators.

Columns are cut at the dashes of the table's rule line (labels with spaces, values aligned either
way). Values are as printed (rounded to 2 decimals)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, replace

from ncu_roof.base.ncu import PROFILING
from ncu_roof.base.units import NumberStyle, detect_number_style
from ncu_roof.errors import BadInputError, naming_file
from ncu_roof.ingest.csvblocks import MAX_DEVICE_INDEX, Damage
from ncu_roof.ingest.csvdetails import LAUNCH_LABELS, averages_note, kernel_launches, metric_for
from ncu_roof.ingest.table import KINDS, InputFormat, RunTable

_SECTION = re.compile(r"^(?=\s)(?P<indent> *)\s*Section: (?P<name>.+?)\s*$")
_RULE = re.compile(r"^\s*-{2,}(?: +-{2,})*\s*$")
_PROCESS = re.compile(r"^\[(?P<pid>\d+)\] \S")
_DEVICE_LINE = re.compile(r"^\s+Device (?P<device>\d+)\s*$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029]")
# Terminal colour and cursor codes (CSI and OSC sequences) of a coloured log line: dropped.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_REST = (
    r"(?P<rest>(?:, (?:Context \d+|Stream \d+|Device \d+|CC \d+\.\d+|Invocations \d+|\d+ invocations))*)\s*$"
)
_KERNEL_LINES = (
    re.compile(r"^\s+(?P<name>\S.*?) \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, \d+)\)" + _REST),
    re.compile(r"^\s+(?P<name>\S.*?), \d{4}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2}" + _REST),
    re.compile(r"^\s+(?P<name>\S.*?), Block Size (?P<block>\d+), Grid Size (?P<grid>\d+)" + _REST),
)
_FIELD = re.compile(r"(Device|CC|Invocations) (\d+(?:\.\d+)?)|(\d+) invocations")
_PIECES = (_SECTION, _PROCESS, _DEVICE_LINE, *_KERNEL_LINES)  # what ends a section table


_PROFILING = re.compile(PROFILING + r"(?<=\d)\b", re.MULTILINE)  # (only a line with the result ID)
_SECTION_BYTES = re.compile(rb"^(?:" + _ANSI.pattern.encode() + rb")*[ \t]+Section: ", re.MULTILINE)


def is_console_text(raw: bytes) -> bool:
    """Section tables (in a file without a CSV header): what ncu prints to a terminal."""
    # a literal search first: the regex scan is slower
    return raw.find(b"Section: ") != -1 and _SECTION_BYTES.search(raw) is not None


@dataclass
class Kernel:
    """A kernel line as read, and the section tables under it."""

    line: int
    name: str
    process_id: str | None
    grid: str | None
    block: str | None
    device: int | None
    cc: str | None
    invocations: int | None
    labels: dict[str, list[str]] = field(default_factory=dict)  # section → its row labels, as printed
    values: dict[str, tuple[str, str]] = field(default_factory=dict)  # metric → (text, unit)
    averaged: set[str] = field(default_factory=set)
    cut_off: bool = False
    lost: bool = False  # damage said: sections split off their kernel (`strays`), a device no GPU has
    summary: bool = False  # a --print-summary kernel line (invocations, or "Block Size N, …")

    @property
    def left_out(self) -> bool:
        """Damaged: an error, or with `--skip-bad-rows` a kernel left out (and counted)."""
        return self.cut_off or self.lost


@dataclass
class _Table:
    """One section table being read. Its layouts: rule, title, rule, rows, rule (details and summaries); rule,
    rows, rule (old, no title); title, rule, rows, blank line (2022 summaries). Other lines in it (program
    output, an NVTX stack) are passed over; ending otherwise (a section, a kernel, the end) it is cut off."""

    kernel: Kernel
    labels: list[str]  # its rows' (the kernel's list for this section)
    indent: int  # the `Section:` line's, which its rules share
    spans: list[tuple[int, int]] | None = None
    average: bool = False
    title_first: bool = False  # the title row above the first rule: a blank line ends the table
    open: bool = True
    complete: bool = False


def _kernel_line(line: str, number: int, pid: str | None, device: int | None) -> Kernel | None:
    for pattern in _KERNEL_LINES:
        if (match := pattern.match(line)) is None:
            continue
        fields = {m[1]: m[2] for m in _FIELD.finditer(match["rest"]) if m[1]}
        counted = [int(m[3]) for m in _FIELD.finditer(match["rest"]) if m[3]]
        invocations = int(fields["Invocations"]) if "Invocations" in fields else next(iter(counted), None)
        device = int(fields["Device"]) if "Device" in fields else device
        summary = invocations is not None or pattern is _KERNEL_LINES[-1]
        grid, block = (f"({v})" if v and "," in v else v for v in map(match.groupdict().get, KINDS))
        return Kernel(
            number, match["name"], pid, grid, block, device, fields.get("CC"), invocations, summary=summary
        )
    return None


def _parse(text: str, damage: Damage) -> list[Kernel]:
    kernels: list[Kernel] = []
    kernel: Kernel | None = None
    table: _Table | None = None
    pid: str | None = None
    device: int | None = None
    lines = text.split("\n")
    if not lines[-1].strip():
        lines.pop()  # the break that ends the last line (and what a cut left after it): no blank line
    for number, raw_line in enumerate(lines, start=1):
        line = raw_line.removesuffix("\r")
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if _CONTROL.search(line):  # a byte ncu never writes: the line cannot be trusted
            damage.add(number, "a control character inside the line")
            continue
        if line.startswith("=="):
            continue
        if table is not None and table.open and _table_line(line, table):
            continue
        if (match := _PROCESS.match(line)) is not None:
            pid, device = match["pid"], None
            continue
        if (match := _DEVICE_LINE.match(line)) is not None:
            device = int(match["device"])
            continue
        if (match := _SECTION.match(line)) is not None:
            table = _section(match["name"], len(match["indent"]), number, kernel, kernels, damage)
            kernel = table.kernel if table is not None else None
            continue
        if (found := _kernel_line(line, number, pid, device)) is not None:
            if not _same_summary(kernel, found):
                kernel = found
                kernels.append(kernel)
            table = None
    if table is not None and table.open and table.labels and not table.complete:
        table.kernel.cut_off = True  # the file ends inside a table
    return kernels


def _section(
    name: str, indent: int, number: int, kernel: Kernel | None, kernels: list[Kernel], damage: Damage
) -> _Table | None:
    """A `Section:` line: the table it opens, or None when it has no kernel."""
    if kernel is None:
        damage.add(number, "a section table before any kernel line (the capture starts mid-way?)")
        return None
    if name in kernel.labels:  # the same section twice with no kernel line between: one is lost
        damage.add(
            number,
            f"section {name!r} again under kernel {kernel.name[:40]!r} (line {kernel.line}) with no "
            "kernel line above it: a kernel line is lost, its kernel unknown",
        )
        kernel = replace(kernel, line=number, values={}, labels={}, averaged=set(), lost=True)
        kernels.append(kernel)
    kernel.labels[name] = []
    return _Table(kernel, kernel.labels[name], indent)


def _table_line(line: str, table: _Table) -> bool:
    """A line of an open table; False (closing it) at ncu's next piece (a section, kernel, process or device
    line). A row starts with the rule, label and value under its dashes: its metric taken (first wins)."""
    if _RULE.match(line):
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", line)]
        if spans[0][0] != table.indent or (table.labels and spans != table.spans):
            return True  # a rule of another program's: passed over
        if table.labels:
            table.open, table.complete = False, True
        table.spans = spans
        return True
    if not line.strip():  # the end of a table without a closing rule, or a blank line inside one
        table.complete = table.complete or (bool(table.labels) and table.title_first)
        return True
    if line.strip().startswith("Metric Name"):
        table.average = "Average" in line
        table.title_first = table.title_first or table.spans is None
        return True
    if any(piece.match(line) for piece in _PIECES):
        table.open = False
        if table.labels and not table.complete:
            table.kernel.cut_off = True  # the table ends without its closing rule
        return False
    if table.spans is None:
        return True
    starts = [start for start, _ in table.spans] + [len(line) + 1]  # a cell runs to the next column
    cells = [line[starts[i] : starts[i + 1]].strip() for i in range(len(table.spans))]
    summary = table.average or len(cells) == 5  # Minimum / Maximum / Average: the Average is read
    value = cells[-1] if summary else cells[min(2, len(cells) - 1)]
    if len(line) - len(line.lstrip(" ")) != starts[0] or len(cells) < 3 or not cells[0] or not value:
        return True  # a line of another program inside the table: passed over
    label, unit, kernel = cells[0], cells[1], table.kernel
    metric = metric_for(label, unit) or LAUNCH_LABELS.get(label)
    if metric is not None and metric not in kernel.values:
        kernel.values[metric] = (value, unit)
        if summary:
            kernel.averaged.add(metric)
    table.labels.append(label)
    table.complete = False  # rows after a blank line: the table went on
    return True


def _same_summary(kernel: Kernel | None, found: Kernel) -> bool:
    """ncu 2022's `--print-summary` repeats the kernel line above each of its sections (a line
    whose invocation count is lost still belongs to its kernel)."""
    if kernel is None or not (kernel.summary and found.summary):
        return False  # details pages: the same line twice is two launches
    if None not in (kernel.invocations, found.invocations) and kernel.invocations != found.invocations:
        return False
    if not all(getattr(kernel, k) == getattr(found, k) for k in ("name", "grid", "block", "device")):
        return False
    kernel.invocations = kernel.invocations or found.invocations
    return True


def read_console_text(path: str, raw: bytes, style: NumberStyle | None, skip_bad_rows: bool) -> RunTable:
    damage, text = Damage(path, skip_bad_rows), raw.decode("utf-8", "replace")
    kernels = _parse(text, damage)
    cut_tail(kernels)
    strays(kernels, damage)
    for kernel in kernels:
        what = f"kernel {kernel.name[:40]!r}"
        if kernel.cut_off:
            damage.add(kernel.line, f"{what}: its table is cut off (truncated file?)")
        if kernel.device is not None and kernel.device > MAX_DEVICE_INDEX:  # damage, as in a CSV
            kernel.lost = True
            damage.add(kernel.line, f"{what}: Device {kernel.device} is not a device index")
    damage.check()
    if not (intact := [k for k in kernels if not k.left_out and k.values]):
        raise BadInputError(
            f"{path}: ncu console text, but no kernel with a section table in it",
            hint="capture the whole output (`ncu ./app > log.txt 2>&1`), or save a report with `ncu -o`",
        )
    identity = {
        name: [getattr(k, name) for k in intact] for name in ("process_id", "name", "device", "cc", *KINDS)
    }
    averages = [(averages_note("line", k.invocations),) if k.averaged else () for k in intact]
    with naming_file(path):
        number_style = detect_number_style([text for k in intact for text, _ in k.values.values()], style)
        # a --print-summary kernel of "Invocations N" is N launches of its averages
        counts = [k.invocations or 1 for k in intact]
        launches = kernel_launches(identity, [k.values for k in intact], number_style, averages, counts)
    averaged = sorted({m for k in intact for m in k.averaged})
    if empty := [k for k in kernels if not k.left_out and not k.values]:
        damage.notes.append(
            f"{path}: {len(empty)} kernel line{'s' if len(empty) != 1 else ''} without a readable "
            f"section table left out (first on line {empty[0].line})"
        )
    if text.strip() and not text.endswith("\n"):  # (spaces after the last break are a cut line too)
        damage.cut_short(text.count("\n") + 1)
    announced = len({line["id"] for line in _PROFILING.finditer(text)})  # distinct result IDs
    if announced > launches.height:
        damage.notes.append(
            f"{path}: the ==PROF== lines announce {announced} profiled launches but "
            f"{launches.height} were read (the capture is cut short, or lines were lost)"
        )
    warnings = damage.warnings(sum(k.left_out for k in kernels))
    return RunTable(path, InputFormat.CONSOLE_TEXT, None, launches, warnings, tuple(averaged))


# --- what no single line shows, checked once the whole text is read -----------------------------


def cut_tail(kernels: list[Kernel]) -> None:
    """A file cut at a line end between rows or sections of its last kernel: ncu prints a run's kernels alike,
    so a last kernel whose last section's rows are the first few of another's, or on a details page whose
    sections (with their rows) are another's first few, was cut there (a summary's on two GPUs may differ)."""
    last = kernels[-1] if kernels else None
    if last is None or last.left_out or not last.labels:
        return
    sections = list(last.labels)
    for other in kernels[:-1]:
        if other.summary != last.summary or other.left_out or list(other.labels)[: len(sections)] != sections:
            continue
        alike = all(last.labels[s] == other.labels[s] for s in sections[:-1])
        rows, theirs = last.labels[sections[-1]], other.labels[sections[-1]]
        fewer = not last.summary and rows == theirs and len(other.labels) > len(sections)
        cut = len(rows) < len(theirs) and theirs[: len(rows)] == rows  # the first few of theirs
        if alike and (cut or fewer):
            last.cut_off = True
            return


def strays(kernels: list[Kernel], damage: Damage) -> None:
    """ncu 2022's summary repeats the kernel line above each section; a damaged copy (name, grid or count),
    read as another kernel, takes the sections below from theirs. ncu prints sections in one order: a summary
    kernel beginning past the first, with one the kernel above lacks, continues it (damaged)."""
    first = next((next(iter(k.labels)) for k in kernels if k.labels), None)
    for above, kernel in itertools.pairwise(kernels):
        if not (above.summary and kernel.summary and kernel.labels) or kernel.device != above.device:
            continue
        begins = next(iter(kernel.labels))
        if begins != first and begins not in above.labels and not kernel.cut_off:
            kernel.lost = True
            damage.add(
                kernel.line,
                f"kernel {kernel.name[:40]!r}: its sections begin at {begins!r}, not at {first!r}: "
                f"they continue the kernel on line {above.line} (a damaged copy of its line?)",
            )
