"""Predict-vs-measure: an expectations file checked against an `Analysis`.

Each `[[expect]]` names kernels by regex and states the predicted bound (and binding tier), and
optionally the model's FLOPs and bytes (given, or from a built-in workload). A kernel is
contradicted when its verdict differs, or when a measured count is off the model by more than
`tolerance` (a ratio, default 1.5); every check carries one sentence explaining the gap."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.records import Kernel, bound_at
from ncu_roof.analysis.workloads import Param, build
from ncu_roof.base.text import one_line, shorten
from ncu_roof.base.tomlfile import read_toml
from ncu_roof.base.units import Dimension, toml_quantity
from ncu_roof.base.vocabulary import COMPUTE, TIER_WORDS, TIERS, Bound, VerdictBasis
from ncu_roof.errors import BadInputError, GateError, NcuRoofError

DEFAULT_TOLERANCE = 1.5
WORKLOAD_KEYS = ("n", "m", "k", "d", "tokens", "dtype", "unfused", "tile")
KNOWN_KEYS = ("kernel", "bound", "binding", "flop", "bytes", "workload", "tolerance", *WORKLOAD_KEYS)
HINT = (
    'write e.g.  [[expect]]  kernel = "silu"  bound = "memory"  binding = "dram"  '
    "bytes = 5.4e8   (see docs/prediction-schema.md)"
)
JSON_SCHEMA = "ncu-roof/expectations/v1"


class Status(Enum):
    CONFIRMED = "confirmed"
    CONTRADICTED = "contradicted"
    UNKNOWN = "unknown"  # the kernel lacks the counters to decide


@dataclass(frozen=True)
class Expectation:
    kernel_pattern: str
    bound: Bound
    binding: str | None = None
    flop: float | None = None
    bytes_by_tier: Mapping[str, float] | None = None
    tolerance: float = DEFAULT_TOLERANCE


@dataclass(frozen=True)
class KernelCheck:
    kernel_id: int
    kernel_name: str
    pattern: str
    status: Status
    expected: str  # `memory-bound at dram`
    measured: str  # `memory-bound at l2 (77% of its roof)`; `unknown` without the counters
    explanation: str  # the whole sentence: `expected …, measured …: why; counts`
    reason: str  # its why and counts alone (the reports' tables show expected and measured beside it)


@dataclass(frozen=True)
class ExpectationReport:
    checks: tuple[KernelCheck, ...]
    unmatched_patterns: tuple[str, ...]

    def counts(self) -> dict[str, int]:
        """Launches per status (every status, zeros included) and the unmatched patterns."""
        counts = {s.value: sum(c.status is s for c in self.checks) for s in Status}
        return {**counts, "unmatched_patterns": len(self.unmatched_patterns)}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (plain str/int values, stable key order), e.g. for `analyze`'s
        "expectations" key. Names and patterns are raw: `json.dumps` escapes them."""
        return {
            "schema": JSON_SCHEMA,
            "checks": [{**asdict(c), "status": c.status.value} for c in self.checks],
            "unmatched_patterns": list(self.unmatched_patterns),
            "counts": self.counts(),
        }


def load_expectations(path: str) -> tuple[Expectation, ...]:
    return parse_expectations(read_toml(path, "expectations", HINT), path)


def parse_expectations(data: Mapping[str, Any], path: str = "expectations") -> tuple[Expectation, ...]:
    tables = data.get("expect")
    if not isinstance(tables, list) or not tables:
        raise _bad(path, "needs at least one [[expect]] table")
    return tuple(_expectation(t, f"{path}: [[expect]] #{i + 1}") for i, t in enumerate(tables))


def _bad(where: str, words: str) -> BadInputError:
    return BadInputError(f"{where}: {words}", hint=HINT)


def _expectation(table: Any, where: str) -> Expectation:
    if not isinstance(table, dict):
        raise _bad(where, "not a table")
    if unknown := sorted(set(table) - set(KNOWN_KEYS)):
        raise BadInputError(f"{where}: unknown key {unknown[0]!r}", hint="keys: " + ", ".join(KNOWN_KEYS))
    pattern = table.get("kernel")
    if not isinstance(pattern, str) or not pattern:
        raise _bad(where, 'needs kernel = "REGEX"')
    try:
        re.compile(pattern)
    except re.error as err:
        raise _bad(where, f"kernel {pattern!r} is not a valid regex ({err})") from None
    bound_text = table.get("bound")
    if bound_text not in ("memory", "compute", "latency"):
        raise _bad(where, f"bound must be memory, compute or latency, not {bound_text!r}")
    bound, binding = Bound(bound_text), table.get("binding")
    if binding is not None and (not isinstance(binding, str) or bound is Bound.LATENCY):
        raise _bad(
            where, "binding must be a tier name (or compute) for a memory- or compute-bound expectation"
        )
    binding = binding.lower() if binding else None
    if binding is not None and binding not in (*TIERS, COMPUTE):
        # a roof no kernel can bind at (`hbm`, a typo) would contradict every kernel with words
        # about a tier that does not exist
        raise _bad(where, f"binding {binding!r} is no roof: {', '.join((*TIERS, COMPUTE))}")
    if bound is Bound.MEMORY and binding == COMPUTE:
        raise _bad(where, "a memory-bound kernel binds at a memory tier, not compute")
    if bound is Bound.COMPUTE and binding not in (None, COMPUTE):
        raise _bad(where, f"a compute-bound kernel binds at compute, not {binding!r}")
    tolerance = table.get("tolerance", DEFAULT_TOLERANCE)  # a ratio: a plain TOML number (no bool)
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 1 <= tolerance < math.inf:
        raise _bad(where, f"tolerance is a finite ratio >= 1 (e.g. 1.5), not {tolerance!r}")
    flop, nbytes = _model_counts(table, where)
    return Expectation(pattern, bound, binding, flop, nbytes, float(tolerance))


def _model_counts(table: Mapping[str, Any], where: str) -> tuple[float | None, Mapping[str, float] | None]:
    """The model's FLOPs and bytes per tier: a built-in workload's, or the ones given."""
    if "workload" in table:
        if "flop" in table or "bytes" in table:
            raise _bad(where, "give a workload or flop/bytes, not both")
        params: dict[str, Param | None] = {k: table[k] for k in WORKLOAD_KEYS if k in table}
        try:
            workload = build(str(table["workload"]), params)
        except NcuRoofError as err:
            raise BadInputError(f"{where}: {err.message}", hint=err.hint) from None
        return workload.flop, workload.bytes_by_tier
    if stray := [k for k in WORKLOAD_KEYS if k in table]:
        raise _bad(where, f'{stray[0]} needs a workload = "NAME"')
    flop = _quantity(table["flop"], Dimension.FLOP, where) if "flop" in table else None
    if (raw := table.get("bytes")) is None:  # per tier, or a bare figure: DRAM's
        return flop, None
    by_tier = raw if isinstance(raw, dict) else {"dram": raw}
    if unknown := sorted(str(t) for t in by_tier if str(t).lower() not in TIERS):
        # never checked against anything, so never a contradiction: refused, not passed over
        raise _bad(where, f"bytes of {unknown[0]!r}: the tiers are {', '.join(TIERS)}")
    return flop, {str(t).lower(): _quantity(v, Dimension.BYTE, where) for t, v in by_tier.items()}


def _quantity(value: Any, dimension: Dimension, where: str) -> float:
    return toml_quantity(value, dimension, where, HINT, "{where}: {value!r} is not a {unit} count")


def check(analysis: Analysis, expectations: Sequence[Expectation]) -> ExpectationReport:
    checks: list[KernelCheck] = []
    unmatched: list[str] = []
    names = analysis.launches.get_column("name").to_list()
    for expectation in expectations:
        pattern = re.compile(expectation.kernel_pattern)
        hits = {name: bool(pattern.search(name)) for name in set(names)}  # names repeat: each once
        if not (matched := [analysis.kernels[j] for j, name in enumerate(names) if hits[name]]):
            unmatched.append(expectation.kernel_pattern)
        checks += [check_kernel(k, expectation) for k in matched]
    return ExpectationReport(tuple(checks), tuple(unmatched))


def check_kernel(k: Kernel, e: Expectation) -> KernelCheck:
    """A launch against its expectation: the status, what the sentence states first (the expected
    and measured verdicts), and why (the reports' tables show the verdicts beside it)."""
    tier = k.sol_unit if k.verdict_basis is VerdictBasis.SOL else k.binding
    roof = f" ({k.pct_of_roof:.0f}% of its roof)" if k.pct_of_roof is not None else ""
    expected, measured = _words(e.bound, e.binding), _words(k.bound, tier) + roof
    if k.bound is Bound.UNKNOWN:
        status, stated, why = Status.UNKNOWN, f"cannot check {expected}: ", "the report lacks "
        why += ", ".join(k.missing) or "counters"
    elif k.bound is e.bound and (e.binding is None or e.bound is Bound.LATENCY or tier == e.binding):
        status, stated, why = Status.CONFIRMED, f"{measured} ", "as expected"
    else:
        status, stated, why = Status.CONTRADICTED, f"expected {expected}, measured {measured}: ", _why(k, e)
    gaps = _count_gaps(k, e)
    off = [text for outside, text in gaps if outside]
    within = [text for outside, text in gaps if not outside]
    if status is Status.CONFIRMED and off:
        # the verdict matches but a count does not: say so before anything else
        status, why = Status.CONTRADICTED, f"{why}, but {off.pop(0)}"
    why = "; ".join([why, *off, *within])
    return KernelCheck(k.id, k.name, e.kernel_pattern, status, expected, measured, stated + why, why)


def _words(bound: Bound, where: str | None) -> str:
    """`memory-bound at dram` (a memory bound and its tier), `compute-bound`, or balanced's words."""
    if bound is Bound.BALANCED:
        return "balanced (compute and memory equally busy, by Speed of Light)"
    return bound_at(bound, where)


def _why(k: Kernel, e: Expectation) -> str:
    """The kernel engineer's reading of a verdict that differs from the prediction."""
    if k.bound is Bound.LATENCY:
        return (
            "neither SM nor memory throughput reaches 60% of peak, so too little parallelism "
            "or too many dependent accesses keep it from any roof"
        )
    if e.bound is Bound.LATENCY:
        return "it saturates a roof, so there is enough parallelism to hide latency"
    if k.bound is Bound.BALANCED:
        return "SM and memory throughput are within 10 points of each other: neither alone limits it"
    tier = k.binding or "?"
    ai = k.intensity_flop_per_byte.get(tier) if tier != COMPUTE else None
    if k.bound is Bound.MEMORY and e.bound is Bound.COMPUTE:
        at = f" ({ai:.3g} FLOP/B)" if ai is not None else ""
        return (
            f"its intensity at {tier}{at} is below the ridge point: operands are not reused "
            "on chip as much as the model assumes"
        )
    if k.bound is Bound.COMPUTE:
        return "it does more arithmetic per byte than predicted: data is reused better than assumed"
    return (
        f"the {tier} traffic takes longer than the {e.binding} traffic: the working set does "
        f"not stay in {e.binding}"
        if e.binding
        else "a different tier binds"
    )


def _count_gaps(k: Kernel, e: Expectation) -> list[tuple[bool, str]]:
    """(off by more than the tolerance?, sentence) for each count the expectation models."""
    gaps: list[tuple[bool, str]] = []
    if e.flop and (measured_flop := k.flop.get("total")) is not None:
        above = "the kernel does extra arithmetic (recomputation, or instructions the model does not count)"
        below = (
            "part of the work is not in the FLOP counters (special-function "
            "or integer instructions) or the model over-counts"
        )
        gaps.append(_gap("FLOPs", "", measured_flop / e.flop, e.tolerance, above, below))
    for tier, model_bytes in (e.bytes_by_tier or {}).items():
        if model_bytes > 0 and (measured := k.bytes.get(tier)) is not None:
            words = TIER_WORDS.get(tier, tier)
            above = (
                "data is read more than once (poor reuse or uncoalesced access)"
                if tier == "dram"
                else "accesses are uncoalesced or repeated beyond what the model counts"
            )
            below = f"part of the data was served from a cache above {words}, or the model over-counts"
            gaps.append(_gap(f"{words} bytes", " minimum", measured / model_bytes, e.tolerance, above, below))
    return gaps


def _gap(what: str, model: str, ratio: float, tolerance: float, above: str, below: str) -> tuple[bool, str]:
    """(off by more than the tolerance?, `measured <what> are <ratio>× the model's<model>`, with the
    tolerance it is beyond or below, and why: `above` or `below`)."""
    text = f"measured {what} are {_times(ratio, tolerance)}× the model's{model}"
    if ratio > tolerance:
        return True, f"{text} (beyond the {tolerance:g}× tolerance): {above}"
    if ratio < 1 / tolerance:
        return True, f"{text} (below 1/{tolerance:g}× = {1 / tolerance:.2f}×, the tolerance): {below}"
    return False, f"{text} (within the {tolerance:g}× tolerance)"


def _times(ratio: float, tolerance: float) -> str:
    """The ratio with enough digits to show which side of the tolerance it falls on: 1.54 against
    a 1.5× tolerance is `1.54`, not `1.5` (which would read as within it)."""
    low, high = 1 / tolerance, tolerance
    for digits in (1, 2, 3, 4):
        shown = f"{ratio:.{digits if ratio >= 1 else digits + 1}f}"
        value = float(shown)
        if (ratio > high) == (value > high) and (ratio < low) == (value < low):
            return shown
    return f"{ratio:.6g}"


def render_expectations(report: ExpectationReport) -> str:
    lines = ["expectations:"] + [
        f"  {c.status.value.upper():<12} #{c.kernel_id} {shorten(c.kernel_name, 50)} "
        f"[/{one_line(c.pattern)}/]: {one_line(c.explanation)}"
        for c in report.checks
    ]
    lines += [f"  UNMATCHED    /{one_line(p)}/: no kernel matches" for p in report.unmatched_patterns]
    lines.append(f"  {tally(report.counts())}")
    return "\n".join(lines) + "\n"


def tally(counts: Mapping[str, int]) -> str:
    """`3 confirmed, 1 contradicted, 0 unknown, 1 unmatched pattern(s)` (`ExpectationReport.counts`)."""
    by_status = ", ".join(f"{counts[s.value]} {s.value}" for s in Status)
    return f"{by_status}, {counts['unmatched_patterns']} unmatched pattern(s)"


def gate(report: ExpectationReport) -> None:
    """`--fail-on-mismatch`: a contradicted kernel is exit code 1."""
    if bad := [c for c in report.checks if c.status is Status.CONTRADICTED]:
        first = bad[0]
        raise GateError(
            f"{len(bad)} kernel launch(es) contradict their expectation; first: "
            f"#{first.kernel_id} {shorten(first.kernel_name, 50)}: {first.explanation}",
            hint="fix the kernel, or the expectation if the model was wrong",
        )
