"""The kernels of ncu's console text as the reader (`ingest.console`) finds them, and the checks
of them once the whole text is read, of what no single line shows (`strays`, `bad_devices`,
`cut_tail`)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ncu_roof.ingest.csvblocks import MAX_DEVICE_INDEX, Damage


@dataclass
class Kernel:
    line: int
    name: str
    process_id: str | None
    grid: str | None
    block: str | None
    device: int | None
    cc: str | None
    invocations: int | None
    sections: list[str] = field(default_factory=list)  # in the order printed
    values: dict[str, tuple[str, str]] = field(default_factory=dict)  # metric → (text, unit)
    labels: dict[str, list[str]] = field(default_factory=dict)  # section → its row labels, in order
    averaged: set[str] = field(default_factory=set)
    cut_off: bool = False
    stray: bool = False  # sections split off their kernel by a damaged kernel line (`strays`)
    bad_device: bool = False  # a device index no GPU has (`bad_devices`)
    summary: bool = False  # a --print-summary kernel line (invocations, or "Block Size N, …")

    @property
    def left_out(self) -> bool:
        """Damaged: an error, or with `--skip-bad-rows` a kernel left out (and counted)."""
        return self.cut_off or self.stray or self.bad_device


def cut_tail(kernels: list[Kernel]) -> None:
    """A file cut at a line end between rows, or between sections, of its last kernel: ncu prints
    the kernels of a run alike, so a last kernel whose last section's rows are the first few of
    another kernel's, or on a details page whose sections (each with that kernel's rows) are the
    first few of its sections, was cut there. (A summary's kernels on two GPUs may differ.)"""
    last = kernels[-1] if kernels else None
    if last is None or last.left_out or not last.sections:
        return
    final = last.sections[-1]
    for other in kernels[:-1]:
        if (
            other.summary != last.summary
            or other.left_out
            or other.sections[: len(last.sections)] != last.sections
        ):
            continue
        alike = all(last.labels[s] == other.labels[s] for s in last.sections[:-1])
        rows, theirs = last.labels[final], other.labels[final]
        fewer = not last.summary and rows == theirs and len(other.sections) > len(last.sections)
        cut = len(rows) < len(theirs) and theirs[: len(rows)] == rows  # the first few of theirs
        if alike and (cut or fewer):
            last.cut_off = True
            return


def bad_devices(kernels: list[Kernel], damage: Damage) -> None:
    """A device index above any real one (`Device 99999999999999999999`) is damage, as in a CSV."""
    for kernel in kernels:
        if kernel.device is not None and kernel.device > MAX_DEVICE_INDEX:
            kernel.bad_device = True
            reason = f"kernel {kernel.name[:40]!r}: Device {kernel.device} is not a device index"
            damage.add(kernel.line, reason)


def strays(kernels: list[Kernel], damage: Damage) -> None:
    """ncu 2022's summary repeats the kernel line above each section; a damaged copy (name, grid
    or count) no longer matches and, read as one more kernel, would take the sections below it
    from their kernel. ncu prints every kernel's sections in one order, so a summary kernel that
    begins past the first section, with one the summary kernel above it lacks, continues that
    kernel: damaged, and left out when skipping."""
    first = next((k.sections[0] for k in kernels if k.sections), None)
    for above, kernel in itertools.pairwise(kernels):
        if not (above.summary and kernel.summary and kernel.sections) or kernel.device != above.device:
            continue
        begins = kernel.sections[0]
        if begins != first and begins not in above.sections and not kernel.cut_off:
            kernel.stray = True
            damage.add(
                kernel.line,
                f"kernel {kernel.name[:40]!r}: its sections begin at {begins!r}, not at {first!r}: "
                f"they continue the kernel on line {above.line} (a damaged copy of its line?)",
            )
