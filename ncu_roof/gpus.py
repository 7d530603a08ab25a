"""The built-in GPUs looked up: by key (`a100-sxm4`), or by the device name ncu writes, matched
whole; an unknown name gets the closest keys in its hint."""

from __future__ import annotations

import difflib
import re

from ncu_roof.errors import UsageError
from ncu_roof.gpu_specs import Gpu
from ncu_roof.gpu_table import GPUS

BY_KEY = {gpu.key: gpu for gpu in GPUS}
_PREFIXES = ("nvidia ", "geforce ", "tesla ", "quadro ")


def normalize_name(name: str) -> str:
    """ncu's device name in one spelling across driver eras: `NVIDIA A100-SXM4-40GB`,
    `A100-SXM4-40GB` → `a100 sxm4 40gb`; `Tesla V100-SXM2-16GB` → `v100 sxm2 16gb`."""
    text = re.sub(r"[\s\-_]+", " ", name.strip().lower())
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            if text.startswith(prefix):
                text, changed = text[len(prefix) :], True
    return text.strip()


_BY_NAME = {name: gpu for gpu in GPUS for name in gpu.names}


def match_gpu(display_name: str | None) -> Gpu | None:
    """The product row of ncu's device name, matched whole (so `RTX 4090 Laptop GPU`, `RTX 4070 Ti
    SUPER` or `A10G` never take the row of `RTX 4090`, `RTX 4070` or `A10`)."""
    if not display_name:
        return None
    return _BY_NAME.get(normalize_name(display_name))


def gpu_by_key(key: str) -> Gpu:
    """A built-in row by key (any case) or by the device name ncu writes."""
    gpu = BY_KEY.get(key.strip().lower()) or match_gpu(key)
    if gpu is not None:
        return gpu
    close = difflib.get_close_matches(key.strip().lower(), list(BY_KEY), n=3, cutoff=0.6)
    close += [
        _BY_NAME[n].key
        for n in difflib.get_close_matches(normalize_name(key), list(_BY_NAME), n=3, cutoff=0.75)
        if _BY_NAME[n].key not in close
    ]
    guess = f"did you mean {' or '.join(close)}? " if close else ""
    raise UsageError(
        f"unknown GPU {key!r}",
        hint=guess + "`ncu-roof gpus` lists the built-in keys; or describe yours with --roofs FILE.toml",
    )
