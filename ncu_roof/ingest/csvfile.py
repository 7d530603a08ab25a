"""ncu CSV output: the raw page (one row per launch, `ingest.csvraw`) or the details page (one row
per metric, `ingest.csvdetails`), their blocks parsed by column *name* (`ingest.csvblocks`)."""

import re
from collections import Counter
from collections.abc import Callable

from ncu_roof.base.metrics import is_wanted
from ncu_roof.base.units import NumberStyle
from ncu_roof.errors import BadInputError, naming_file
from ncu_roof.ingest.csvblocks import (
    _CSV_IDENTITY,
    _DETAILS_KEYS,
    _ID_START,
    Block,
    Damage,
    find_blocks,
    is_details,
)
from ncu_roof.ingest.csvdetails import read_details
from ncu_roof.ingest.csvraw import finish_raw, parse_raw
from ncu_roof.ingest.table import InputFormat, RunTable, settle_shapes

_NCU_LINE = re.compile(r"^==(PROF|WARNING|ERROR)==\s*(.*)$", re.MULTILINE)


def _orphans(prefix: bytes, damage: Damage) -> None:
    """CSV rows or a header-like line before the first header (in `prefix`): a header line that
    was damaged, and the rows under it would be lost without a word."""
    for number, line in enumerate(prefix.decode("utf-8", "replace").split("\n"), start=1):
        if line.count(",") < 5 or line.startswith("=="):
            continue
        if _ID_START.match(line) or '"Kernel Name"' in line or "Process ID" in line:
            damage.add(
                number, "a CSV row (or header) before the first intact header (a damaged header line?)"
            )


def check_header(path: str, block: Block) -> None:
    """A header that cannot be read by name: a needed column twice, or a details page that lost
    one of its key columns (read as a raw page it would give one bogus kernel per metric row)."""
    needed = [c for c in block.header if c in _CSV_IDENTITY or c in _DETAILS_KEYS or is_wanted(c)]
    if twice := sorted(c for c, times in Counter(needed).items() if times > 1):
        raise BadInputError(
            f"{path}: line {block.line}: column {twice[0]!r} appears more than once in the header",
            hint="re-export the report; a hand-edited CSV must name each column once",
        )
    if any(c in block.header for c in _DETAILS_KEYS) and not is_details(block.header):
        lost = [c for c in ("Metric Name", "Metric Value") if c not in block.header]
        raise BadInputError(
            f"{path}: line {block.line}: a details-page header without {' or '.join(map(repr, lost))}",
            hint="re-export the details page (`ncu --import R --csv --page details`), or the raw page",
        )


def read_csv_file(
    path: str, raw: bytes, starts: list[int], style: NumberStyle | None, skip_bad_rows: bool = False
) -> Callable[[], RunTable]:
    """A raw or details page (headers at `starts`: `find_headers(raw)[0]`): this reads what needs the bytes;
    the returned step makes the table once the caller let them go (5,000-launch export: 72 MB lower peak)."""
    if not (blocks := find_blocks(raw, starts)):
        raise no_csv_error(path, raw)
    for block in blocks:
        check_header(path, block)
    details = [is_details(b.header) for b in blocks]
    if any(details) and not all(details):
        raise BadInputError(
            f"{path}: mixes raw-page and details-page CSV blocks",
            hint="export each page to its own file (`ncu --import R --csv --page raw`)",
        )
    pivot = all(details)  # the details/raw choice, made once
    damage = Damage(path, skip_bad_rows)
    _orphans(raw[: starts[0]], damage)
    with naming_file(path):  # units and number styles: say which file
        pivoted = read_details(blocks, style, damage) if pivot else None
        parts = [] if pivot else parse_raw(blocks, damage)

    def finish() -> RunTable:
        with naming_file(path):
            launches = pivoted if pivot else finish_raw(parts, style)
        damage.check()
        if launches is None:
            what = "no intact kernel rows" if damage.rows else "no kernel rows"
            raise BadInputError(
                f"{path}: the CSV header is there but {what} follow (truncated file?)",
                hint="re-export the report: "
                "`ncu --import report.ncu-rep --csv --page raw --print-units base`",
            )
        lost = damage.lost_kernels if pivot else damage.damaged_rows()
        fmt = InputFormat.DETAILS_CSV if pivot else InputFormat.RAW_CSV
        return RunTable(path, fmt, None, settle_shapes(launches), damage.warnings(lost))

    return finish


def no_csv_error(path: str, raw: bytes) -> BadInputError:
    text = raw.decode("utf-8", "replace")
    if not text.strip():
        return BadInputError(
            f"{path}: file is empty",
            hint="profile again: `ncu-roof profile -- ./app`, or `ncu --csv --page raw ... > run.csv`",
        )
    if re.search(r"^\s+Section: ", text, re.MULTILINE):
        return BadInputError(
            f"{path}: this is ncu console text, not CSV",
            hint="save the report instead (`ncu -o run ...`) or export CSV with "
            "`ncu --import run.ncu-rep --csv --page raw --print-units base`",
        )
    messages = [f"=={m.group(1)}== {m.group(2).strip()}" for m in _NCU_LINE.finditer(text)]  # prefix kept
    if messages:  # the last error or warning, else the last message
        quoted = ([m for m in messages if not m.startswith("==PROF==")] or messages)[-1]
        return BadInputError(
            f"{path}: holds ncu messages but no CSV; ncu said: {quoted}",
            hint="nothing was profiled: check the kernel filters (-k, -c, --nvtx) and "
            "`--target-processes all`, then profile again",
        )
    return BadInputError(
        f'{path}: not an Nsight Compute CSV or report (no `"ID","Process ID",...` header)',
        hint="ncu-roof reads `.ncu-rep` files and `ncu --csv` output (raw or details page)",
    )
