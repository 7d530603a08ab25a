"""`history add`: one run's files published into a dataset, once.

A run is what was measured: its id is a hash of the commit and of the inputs' bytes
(`record.run_id`). Adding the same files for the same commit again writes nothing — unless the
add states something of the run that differs from what is stored (another `--time`, `--gpu`,
`--branch`, `--label`, `--clock-control`, `--driver` or `--host`): that is refused, naming what
differs, for the same launches counted twice would be the gate's noise sample counted twice;
`replace=True` (`--replace`) writes the run again with what this add says.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ncu_roof.errors import UsageError
from ncu_roof.history.record import Provenance, build_run, input_paths, run_id
from ncu_roof.history.store import (
    DETAILS,
    Dataset,
    launches_path,
    open_dataset,
    partition_value,
    publish,
    remove,
    replace_file,
    runs_path,
    stored_rows,
)

OPTIONS = {  # a runs column → the option of `history add` that states it
    "time": "--time",
    "roofs_gpu": "--gpu",
    "branch": "--branch",
    "labels": "--label",
    "clock_control": "--clock-control",
    "driver": "--driver",
    "host": "--host",
}


@dataclass(frozen=True)
class Added:
    run_id: str
    launches: int
    gpus: tuple[str, ...]
    new: bool  # False: the dataset held this run already, and nothing was written
    replaced: bool = False  # --replace rewrote a stored run


def stated(provenance: Provenance) -> dict[str, Any]:
    """What an add states of its run, as the runs columns hold it: `--gpu` always (left out, the
    automatic roofs), each other option only when it was given."""
    labels = json.dumps(dict(provenance.labels), sort_keys=True) if provenance.labels else None
    given = {
        "time": provenance.time,
        "branch": provenance.branch,
        "labels": labels,
        "clock_control": provenance.clock_control,
        "driver": provenance.driver,
        "host": provenance.host,
    }
    return {"roofs_gpu": provenance.gpu, **{k: v for k, v in given.items() if v is not None}}


def _shown(value: Any) -> str:
    return "none" if value is None else value.isoformat() if isinstance(value, datetime) else str(value)


def conflicts(provenance: Provenance, stored: Mapping[str, Any]) -> list[str]:
    """`--time 2026-11-02T12:00:00+00:00 (stored: 2026-11-01T…)` for each stated value that
    differs from the stored run's."""
    return [
        f"{OPTIONS[column]} {_shown(value)} (stored: {_shown(stored.get(column))})"
        for column, value in stated(provenance).items()
        if value != stored.get(column)
    ]


def add_run(uri: str, paths: Sequence[str], provenance: Provenance, replace: bool = False) -> Added:
    """Analyze the inputs and write their launches and provenance into the dataset at `uri`."""
    dataset = open_dataset(uri)
    items = input_paths(paths)
    rid = run_id(partition_value(provenance.commit, "commit"), items)
    stored = stored_rows(dataset, rid)  # published all or none: one row means the run is there
    if stored and not replace:
        differ = conflicts(provenance, stored[0])
        if differ:
            raise UsageError(
                f"run {rid} of {provenance.commit} is in {uri} already, stated otherwise: "
                + "; ".join(differ),
                hint="the same files of the same commit are one run: add --replace to store it as this add "
                "says, or leave the option out",
            )
        counts = [(str(r["gpu"]), int(r["launches"])) for r in stored]
        return Added(rid, sum(n for _, n in counts), tuple(g for g, _ in counts), new=False)
    run = build_run(items, provenance, rid)
    gpus = tuple(run.launches)
    for gpu in gpus:
        partition_value(gpu, "GPU key")
    rows = {runs_path(dataset, gpu, run.run_id): table for gpu, table in run.runs.items()}
    files = {launches_path(dataset, gpu, provenance.commit, run.run_id): t for gpu, t in run.launches.items()}
    details = {
        launches_path(dataset, gpu, provenance.commit, run.run_id, DETAILS): t
        for gpu, t in run.details.items()
    }
    if stored:  # --replace: each file rewritten in place (old or new, each readable), rows last
        for path, table in {**details, **files, **rows}.items():
            replace_file(dataset, table, path)
        _remove_stale(dataset, stored, set(gpus))
    else:
        publish(dataset, {**details, **files, **rows}, list(rows))
    launches = sum(t.num_rows for t in run.launches.values())
    return Added(run.run_id, launches, gpus, new=True, replaced=bool(stored))


def _remove_stale(dataset: Dataset, stored: Sequence[Mapping[str, Any]], gpus: set[str]) -> None:
    """A replaced run's files on a GPU key it no longer has (its rows first)."""
    for row in stored:
        gpu, commit, rid = str(row["gpu"]), str(row["commit"]), str(row["run_id"])
        if gpu not in gpus:
            remove(dataset, runs_path(dataset, gpu, rid))
            remove(dataset, launches_path(dataset, gpu, commit, rid))
            remove(dataset, launches_path(dataset, gpu, commit, rid, DETAILS))
