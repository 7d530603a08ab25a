"""`history add`: one run's files published into a dataset, once (the same run again is a no-op)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ncu_roof.history.record import Provenance, build_run, input_paths, run_id
from ncu_roof.history.store import (
    DETAILS,
    launches_path,
    open_dataset,
    partition_value,
    publish,
    runs_path,
    stored_rows,
)


@dataclass(frozen=True)
class Added:
    run_id: str
    launches: int
    gpus: tuple[str, ...]
    new: bool  # False: the dataset held this run already, and nothing was written


def add_run(uri: str, paths: Sequence[str], provenance: Provenance) -> Added:
    """Analyze the inputs and write their launches and provenance into the dataset at `uri`."""
    dataset = open_dataset(uri)
    items = input_paths(paths)
    rid = run_id(partition_value(provenance.commit, "commit"), items)
    stored = stored_rows(dataset, rid)  # published all or none: one row means the run is there
    if stored:
        counts = [(str(r["gpu"]), int(r["launches"])) for r in stored]
        return Added(rid, sum(n for _, n in counts), tuple(g for g, _ in counts), new=False)
    run = build_run(items, provenance, rid)
    gpus = tuple(run.launches)
    launches = sum(t.num_rows for t in run.launches.values())
    for gpu in gpus:
        partition_value(gpu, "GPU key")
    rows = {runs_path(dataset, gpu, run.run_id): table for gpu, table in run.runs.items()}
    files = {launches_path(dataset, gpu, provenance.commit, run.run_id): t for gpu, t in run.launches.items()}
    details = {
        launches_path(dataset, gpu, provenance.commit, run.run_id, DETAILS): t
        for gpu, t in run.details.items()
    }
    publish(dataset, {**details, **files, **rows}, list(rows))
    return Added(run.run_id, launches, gpus, new=True)
