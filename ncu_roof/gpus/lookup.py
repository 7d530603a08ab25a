"""The built-in GPUs (`data/gpus.toml`) looked up: by key (`a100-sxm4`), or by the device name ncu
writes, matched whole; an unknown name gets the closest keys in its hint."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache

from ncu_roof.base.tomlfile import package_table
from ncu_roof.errors import UsageError
from ncu_roof.gpus.arch import arch_for_cc
from ncu_roof.gpus.specs import Gpu


@cache
def builtin_gpus() -> dict[str, Gpu]:
    return {row["key"]: Gpu(**{**row, "names": tuple(row["names"])}) for row in package_table("gpus")["gpu"]}


@cache
def _by_name() -> dict[str, Gpu]:
    return {name: gpu for gpu in builtin_gpus().values() for name in gpu.names}


_PREFIXES = re.compile(r"^(?:(?:nvidia|geforce|tesla|quadro) )+")  # any of them, in any order


def normalize_name(name: str) -> str:
    """ncu's device name in one spelling across driver eras: `NVIDIA A100-SXM4-40GB`,
    `A100-SXM4-40GB` → `a100 sxm4 40gb`; `Tesla V100-SXM2-16GB` → `v100 sxm2 16gb`."""
    return _PREFIXES.sub("", re.sub(r"[\s\-_]+", " ", name.strip().lower())).strip()


def match_gpu(display_name: str | None) -> Gpu | None:
    """The product row of ncu's device name, matched whole (so `RTX 4090 Laptop GPU`, `RTX 4070 Ti
    SUPER` or `A10G` never take the row of `RTX 4090`, `RTX 4070` or `A10`)."""
    return _by_name().get(normalize_name(display_name)) if display_name else None


def gpu_by_key(key: str) -> Gpu:
    """A built-in row by key (any case) or by the device name ncu writes."""
    if (gpu := builtin_gpus().get(key.strip().lower()) or match_gpu(key)) is not None:
        return gpu
    close = difflib.get_close_matches(key.strip().lower(), list(builtin_gpus()), n=3, cutoff=0.6)
    close += [
        _by_name()[n].key
        for n in difflib.get_close_matches(normalize_name(key), list(_by_name()), n=3, cutoff=0.75)
        if _by_name()[n].key not in close
    ]
    guess = f"did you mean {' or '.join(close)}? " if close else ""
    raise UsageError(
        f"unknown GPU {key!r}",
        hint=guess + "`ncu-roof gpus` lists the built-in keys; or describe yours with --roofs FILE.toml",
    )


@dataclass(frozen=True)
class Inference:
    """The built-in GPU a file that names none is taken for, from what it does hold."""

    gpu: Gpu | None  # None: no product matches, or several that differ in SMs or memory bus
    candidates: tuple[Gpu, ...]
    evidence: str  # "CC 8.0, 108 SMs"

    def describe(self) -> str:
        """`inferred from CC 8.0, 108 SMs; also matches a100-sxm4, …`."""
        others = [g.key for g in self.candidates if g is not self.gpu]
        also = f"; also matches {', '.join(others)}" if others else ""
        return f"inferred from {self.evidence}{also}"


def infer_gpu(cc: str | None, sm_count: float | None, bus_bits: float | None = None) -> Inference | None:
    """The built-in product of a compute capability and, where the file holds them, its SM count and memory
    bus width: the first in the table's order that matches, the others named (with an SM count their compute
    roofs are the same; memory roofs may differ by bus). Without an SM count, only when every product of that
    CC has the same SMs and bus (and so per-clock roofs), never for a consumer die (`Arch.consumer`: the table
    lists one T4 of CC 7.5's many GTX and RTX cards); None without a compute capability."""
    if not cc:
        return None
    evidence = [f"CC {cc}"]
    matches = [g for g in builtin_gpus().values() if g.cc == cc]
    sms = int(sm_count) if sm_count is not None and sm_count > 0 else None
    if sms is not None:
        evidence.append(f"{sms} SMs")
        matches = [g for g in matches if g.sm_count == sms]
    if bus_bits is not None and bus_bits > 0:
        evidence.append(f"{int(bus_bits)}-bit memory bus")
        matches = [g for g in matches if g.memory_bus_bits == int(bus_bits)]
    shapes = {(g.sm_count, g.memory_bus_bits) for g in matches}
    arch = arch_for_cc(cc)
    alone = len(shapes) == 1 and not (arch is not None and arch.consumer)
    gpu = matches[0] if matches and (alone or sms is not None) else None
    return Inference(gpu, tuple(matches), ", ".join(evidence))
