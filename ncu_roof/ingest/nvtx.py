"""A launch's NVTX ranges as one text (the `nvtx` identity column), from either reader: the push/pop stack
outermost first, joined by `/` (`run_test/daxpy`), then each start/end range, all joined by `, `; a range of a
domain other than the default one is written `domain@range`, as ncu's `--nvtx-include` spells it. None when
the launch ran in no range."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

DEFAULT_DOMAIN = "<default domain>"
_PUSH_POP = "Push/Pop_Range"
_START_END = ("Start/Stop_Range", "Start/End_Range")
_ENTRY = re.compile(r'"([^"]*)"')


def nvtx_text(domains: Iterable[tuple[str, Sequence[str], Sequence[str]]]) -> str | None:
    """`domains`: (domain name, push/pop ranges outermost first, start/end ranges) each."""
    parts: list[str] = []
    for domain, push_pop, start_end in domains:
        prefix = "" if not domain or domain == DEFAULT_DOMAIN else f"{domain}@"
        if push_pop:
            parts.append(prefix + "/".join(push_pop))
        parts.extend(prefix + name for name in start_end)
    return ", ".join(parts) or None


def nvtx_columns(header: Sequence[str]) -> list[str]:
    """CSV columns holding NVTX ranges: `thread Domain:Push/Pop_Range:…`, `Id:Domain:Start/Stop_Range:…`."""
    return [c for c in header if _PUSH_POP in c or any(s in c for s in _START_END)]


def _entries(column: str, cell: str) -> list[tuple[str, str]]:
    """(domain, range name) of each quoted `"<domain>:<name>:…"` entry of one cell, in order. The
    header names the fields (`Domain:Push/Pop_Range:PL_Type:…:Msg`); a name holding `:` takes extra
    fields, as may the message that ends the entry (most often the name again)."""
    fields = column.rsplit(" ", 1)[-1].split(":")
    where = [i for i, f in enumerate(fields) if f.endswith("_Range")]
    if "Domain" not in fields or not where or fields.index("Domain") > where[0]:
        return []
    domain_at, name_at = fields.index("Domain"), where[0]
    entries, n = [entry.split(":") for entry in _ENTRY.findall(cell)], len(fields)
    return [(p[domain_at], _name(p, name_at, len(p) - n, n - name_at - 2)) for p in entries if len(p) >= n]


def _name(parts: list[str], at: int, extra: int, between: int) -> str:
    """The name at `at` when the entry has `extra` fields more than its header: the split whose
    message (after `between` fixed fields) repeats the name, else all extras in the name."""
    for taken in range(extra):
        name = ":".join(parts[at : at + taken + 1])
        if ":".join(parts[at + taken + 1 + between :]) == name:
            return name
    return ":".join(parts[at : at + extra + 1])


def nvtx_of_cells(cells: Mapping[str, str | None]) -> str | None:
    """The NVTX text of one CSV row: `cells` maps each `nvtx_columns` column to its cell."""
    domains: dict[str, tuple[list[str], list[str]]] = {}
    for column, cell in cells.items():
        for domain, name in _entries(column, cell) if isinstance(cell, str) else ():
            domains.setdefault(domain, ([], []))[0 if _PUSH_POP in column else 1].append(name)
    return nvtx_text((d, p, s) for d, (p, s) in domains.items())
