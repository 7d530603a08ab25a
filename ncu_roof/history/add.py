"""`history add`: one run's files published into a dataset, once (the same run again is a no-op)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ncu_roof.history.record import Provenance, build_run
from ncu_roof.history.store import exists, launches_path, open_dataset, partition_value, publish, runs_path


@dataclass(frozen=True)
class Added:
    run_id: str
    launches: int
    gpus: tuple[str, ...]
    new: bool  # False: the dataset held this run already, and nothing was written


def add_run(uri: str, paths: Sequence[str], provenance: Provenance) -> Added:
    """Analyze the inputs and write their launches and provenance into the dataset at `uri`."""
    dataset = open_dataset(uri)
    run = build_run(paths, provenance)
    gpus = tuple(run.launches)
    launches = sum(t.num_rows for t in run.launches.values())
    for gpu in gpus:
        partition_value(gpu, "GPU key")
    rows = {runs_path(dataset, gpu, run.run_id): table for gpu, table in run.runs.items()}
    if all(exists(dataset, path) for path in rows):
        return Added(run.run_id, launches, gpus, new=False)
    files = {launches_path(dataset, gpu, provenance.commit, run.run_id): t for gpu, t in run.launches.items()}
    publish(dataset, {**files, **rows}, list(rows))
    return Added(run.run_id, launches, gpus, new=True)
