"""`ncu-roof history` end to end on small datasets built from the example report's H100 block
(`ncu_roof/data/example.csv`, its silu launches repeated with a deterministic ±1 % jitter), read
back by DuckDB, Polars and pyarrow.dataset as a user would."""

from __future__ import annotations

import csv
import io
import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from test_schemas import assert_valid

from ncu_roof.errors import NcuRoofError
from ncu_roof.history import store
from ncu_roof.history.add import add_run
from ncu_roof.history.record import Provenance, parse_time
from ncu_roof.pipeline import example_path

SILU = "silu_kernel_vector(float *, float *, int)"
GPU = "nvidia-h100-pcie-cc90-114sm"  # the partition: ncu's device name, CC and SM count as recorded
LAUNCHES = 12


def run_csv(folder: Path, name: str, factor: float, seed: int) -> Path:
    """The example's H100 block as a raw page of `LAUNCHES` silu launches, durations × `factor`."""
    lines = Path(example_path()).read_text(encoding="utf-8").splitlines()
    rows = list(csv.reader(lines[1:6]))
    header, units, data = rows[0], rows[1], rows[2:]
    at = header.index("gpu__time_duration.sum")
    jitter = np.random.default_rng(seed).normal(0.0, 0.01, LAUNCHES)
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerows([header, units])
    for i in range(LAUNCHES):
        row = list(data[i % len(data)])
        row[0] = str(i)
        row[at] = f"{float(row[at]) * factor * (1 + jitter[i]):.0f}"
        writer.writerow(row)
    path = folder / f"{name}.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def add(dataset: Path, path: Path, commit: str, day: int, *extra: str) -> None:
    result = run_cli("history", "add", str(dataset), str(path), "--commit", commit,
                     "--time", f"2026-11-{day:02d}T12:00:00Z", "--branch", "main", *extra)  # fmt: skip
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight commits of one silu run each (c0 … c7, a day apart)."""
    folder = tmp_path_factory.mktemp("history")
    dataset = folder / "history"
    for day in range(8):
        add(dataset, run_csv(folder, f"c{day}", 1.0, day), f"c{day}", day + 1, "--clock-control", "base")
    return dataset


@pytest.fixture
def history(built: Path, tmp_path: Path) -> Path:
    """A copy of the eight commits' dataset, and their inputs in `tmp_path`."""
    shutil.copytree(built, tmp_path / "history")
    for day in range(8):
        shutil.copy(built.parent / f"c{day}.csv", tmp_path)
    return tmp_path / "history"


def files_of(dataset: Path) -> dict[str, bytes]:
    return {str(p.relative_to(dataset)): p.read_bytes() for p in sorted(dataset.rglob("*")) if p.is_file()}


def test_a_slower_head_fails_the_gate_with_its_interval_and_culprit_window(
    history: Path, tmp_path: Path
) -> None:
    add(history, run_csv(tmp_path, "head", 1.25, 99), "head", 20, "--clock-control", "base")
    result = run_cli("history", "check", str(history), "--head", "head", "--format", "json")
    assert result.returncode == 1
    assert result.stderr.startswith(
        "error: 1 kernel regressed: slower at 99% confidence by ≥ 3.25% (0.65 of the 5% threshold)"
    )
    doc = json.loads(result.stdout)
    assert doc["schema"] == "ncu-roof/history-check/v1" and doc["counts"]["regression"] == 1
    (moved,) = doc["movements"]
    assert (moved["name"], moved["gpu"], moved["class"]) == (SILU, GPU, "regression")
    low, high = moved["interval_pct"]
    assert 20 < low < moved["shift_pct"] < high < 30  # +25 % injected, ±1 % jitter
    assert (moved["head_launches"], moved["baseline_launches"], moved["baseline_commits"]) == (12, 96, 8)
    assert (moved["last_good"], moved["first_bad"]) == ("c7", "head")
    assert_valid("history-check.v1", doc)
    markdown = run_cli("history", "check", str(history), "--head", "head", "--format", "markdown")
    assert markdown.returncode == 1 and "**ncu-roof history check: 1 kernel regressed" in markdown.stdout


def test_a_head_within_the_noise_passes(history: Path, tmp_path: Path) -> None:
    add(history, run_csv(tmp_path, "head", 1.005, 98), "head", 20, "--clock-control", "base")
    result = run_cli("history", "check", str(history), "--head", "head", "--format", "json")
    assert result.returncode == 0, result.stderr
    (moved,) = json.loads(result.stdout)["movements"]
    assert moved["class"] == "noise" and abs(moved["shift_pct"]) < 2


def test_a_slower_head_measured_otherwise_is_a_method_change_and_passes(
    history: Path, tmp_path: Path
) -> None:
    add(history, run_csv(tmp_path, "head", 1.25, 97), "head", 20, "--clock-control", "none")
    result = run_cli("history", "check", str(history), "--head", "head", "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["baselines"][0]["change"] == {"class": "method change", "reason": "clock control base → none"}
    assert_valid("history-check.v1", doc)
    assert [m["class"] for m in doc["movements"]] == ["method change"]


def test_show_lists_each_commit_in_commit_time_order(tmp_path: Path) -> None:
    dataset = tmp_path / "h"
    for commit, day in (("late", 9), ("early", 2), ("middle", 5)):  # added out of order
        add(dataset, run_csv(tmp_path, commit, 1.0, day), commit, day)
    doc = json.loads(run_cli("history", "show", str(dataset), "--format", "json", "--kernel", "silu").stdout)
    (group,) = doc["groups"]
    assert (group["name"], group["grid"], group["block"], group["gpu"]) == (
        SILU,
        "(65536, 1, 1)",
        "(256, 1, 1)",
        GPU,
    )
    assert [p["commit"] for p in group["points"]] == ["early", "middle", "late"]
    assert {p["launches"] for p in group["points"]} == {LAUNCHES} and {
        p["verdict"] for p in group["points"]
    } == {"memory"}
    assert_valid("history-show.v1", doc)
    last = json.loads(run_cli("history", "show", str(dataset), "-F", "json", "--last", "1").stdout)
    assert [p["commit"] for p in last["groups"][0]["points"]] == ["late"]
    none = json.loads(run_cli("history", "show", str(dataset), "-F", "json", "--kernel", "^gemm").stdout)
    assert none["groups"] == []


def test_show_draws_a_trend_and_writes_every_text_format(history: Path, tmp_path: Path) -> None:
    for fmt, start in (
        ("png", b"\x89PNG"),
        ("svg", b"<?xml"),
        ("html", b"<!doctype html>"),
        ("csv", b"name,grid"),
    ):
        out = tmp_path / f"trend.{fmt}"
        assert run_cli("history", "show", str(history), "-o", str(out)).returncode == 0
        assert out.read_bytes().startswith(start)
    table = run_cli("history", "show", str(history)).stdout
    assert f"silu_kernel_vector(float *, float *, int) 65536×256 on {GPU}" in table
    assert "c0      2026-11-01 12:00" in table


def test_show_gives_each_verdict_its_basis_in_text_json_and_the_trend_plot(
    tmp_path: Path, fixtures: Path
) -> None:
    """The silu launches are placed on the roofline; the unknown GPU's are judged by Speed of
    Light alone: each point says so, and the plot draws the verdict palette with its basis."""
    dataset = tmp_path / "h"
    add(dataset, run_csv(tmp_path, "a", 1.0, 1), "a", 1)
    add(dataset, fixtures / "verdict_sol_unknown_gpu.csv", "b", 2)
    doc = json.loads(run_cli("history", "show", str(dataset), "-F", "json").stdout)
    assert_valid("history-show.v1", doc)
    said = {g["name"]: [(p["verdict"], p["basis"]) for p in g["points"]] for g in doc["groups"]}
    assert said[SILU] == [("memory", "roofline")]
    assert said["busy_math"] == [("compute", "sol")] and said["pointer_chase"] == [("latency", "sol")]
    table = run_cli("history", "show", str(dataset), "--kernel", "busy|silu").stdout
    assert "memory · roofline" in table and "compute · SOL" in table
    svg = run_cli("history", "show", str(dataset), "-F", "svg").stdout
    for label in ("memory-bound · roofline", "compute-bound · SOL", "latency-bound · SOL"):
        assert f">{label}<" in svg
    assert "#0072b2" in svg and "#d55e00" in svg and "#1f77b4" not in svg  # the one palette
    page = run_cli("history", "show", str(dataset), "-F", "html").stdout
    assert "<span class='badge compute'>compute · SOL</span>" in page and "--compute:#d55e00" in page


def test_the_same_run_twice_changes_nothing(history: Path, tmp_path: Path) -> None:
    before = files_of(history)
    result = run_cli("history", "add", str(history), str(tmp_path / "c3.csv"), "--commit", "c3")
    assert result.returncode == 0 and "nothing written" in result.stderr
    assert files_of(history) == before


def test_an_add_interrupted_midway_leaves_the_dataset_as_it_was(
    history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = files_of(history)
    moves: list[str] = []
    real_move = store._move

    def interrupted(dataset: store.Dataset, source: str, target: str) -> None:
        moves.append(target)
        if "/runs/" in target:
            raise KeyboardInterrupt  # Ctrl-C after the launches are in place, before the run's row
        real_move(dataset, source, target)

    monkeypatch.setattr(store, "_move", interrupted)
    with pytest.raises(KeyboardInterrupt):
        add_run(str(history), [str(run_csv(tmp_path, "new", 1.0, 50))], Provenance("new", parse_time(None)))
    assert len(moves) == 3 and files_of(history) == before  # no launch file, no staged file left


def test_two_adds_at_once_both_land(tmp_path: Path) -> None:
    dataset = str(tmp_path / "h")
    paths = [run_csv(tmp_path, f"job{i}", 1.0, i) for i in range(2)]
    errors: list[BaseException] = []

    def job(i: int) -> None:
        try:
            add_run(dataset, [str(paths[i])], Provenance(f"sha{i}", parse_time("2026-11-01")))
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=job, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(list((tmp_path / "h" / "runs").rglob("*.parquet"))) == 2
    assert len(list((tmp_path / "h" / "launches").rglob("*.parquet"))) == 2


def test_duckdb_polars_and_pyarrow_read_the_dataset(history: Path) -> None:
    import duckdb
    import polars as pl
    import pyarrow.dataset as ds

    glob = f"{history}/launches/**/*.parquet"
    rows = duckdb.execute(
        f"SELECT commit, count(*), median(duration_s) FROM read_parquet('{glob}', hive_partitioning=true) "
        f"WHERE gpu = '{GPU}' GROUP BY commit ORDER BY commit"
    ).fetchall()
    assert [(c, n) for c, n, _ in rows] == [(f"c{i}", LAUNCHES) for i in range(8)]
    assert all(280e-6 < m < 290e-6 for _, _, m in rows)
    details = f"{history}/details/**/*.parquet"
    frame = (
        pl.scan_parquet(details, hive_partitioning=True)
        .filter(pl.col("commit") == "c3")
        .select("name", "duration_s", "bound", "counters")
        .collect()
    )
    assert frame.height == LAUNCHES and set(frame["bound"]) == {"memory"}
    counted = frame.select(pl.col("counters").map.get("gpu__time_duration.sum"))  # polars ≥ 2.1: Map
    assert frame["duration_s"].to_list() == counted.to_series().to_list()
    counter = "counters['gpu__time_duration.sum']"
    in_duckdb = duckdb.execute(f"SELECT duration_s, {counter} FROM read_parquet('{details}')").fetchall()
    assert all(d == c for d, c in in_duckdb)
    table = ds.dataset(history / "launches", format="parquet", partitioning="hive").to_table(
        columns=["gpu", "commit", "run_id"]
    )
    assert table.num_rows == 8 * LAUNCHES and set(table.column("gpu").to_pylist()) == {GPU}
    runs = duckdb.execute(
        f"SELECT commit, branch, clock_control, gpu_sku, metric_set FROM '{history}/runs/*/*.parquet'"
    ).fetchall()
    assert (
        len(runs) == 8
        and {r[1:4] for r in runs} == {("main", "base", "h100-pcie")}
        and len({r[4] for r in runs}) == 1
    )


def test_rebuild_derives_the_quantities_again_from_the_stored_counters(history: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (path,) = (history / "launches" / f"gpu={GPU}" / "commit=c2").glob("*.parquet")
    (detail,) = (history / "details" / f"gpu={GPU}" / "commit=c2").glob("*.parquet")
    original, original_detail = pq.read_table(path), pq.read_table(detail)
    for file, table in ((path, original), (detail, original_detail)):  # a recipe that lost the durations
        at = table.column_names.index("duration_s")
        pq.write_table(table.set_column(at, "duration_s", pa.nulls(table.num_rows, pa.float64())), file)
    result = run_cli("history", "rebuild", str(history))
    assert result.returncode == 0 and "rebuilt 8 runs (96 launches)" in result.stderr
    rebuilt = pq.read_table(path)
    assert rebuilt.column("duration_s").to_pylist() == original.column("duration_s").to_pylist()
    assert rebuilt.column("bound").to_pylist() == original.column("bound").to_pylist()
    assert rebuilt.column_names == original.column_names
    assert pq.read_table(detail).equals(original_detail)


def test_rebuild_keeps_a_note_that_only_a_later_launch_has(tmp_path: Path) -> None:
    """A text key absent on the first stored launch, present on the second (launch 1's duration
    excluded as impossible: its note): rebuilt as stored (a crash once the table was Polars)."""
    import pyarrow.parquet as pq

    with (Path(__file__).resolve().parents[1] / "fixtures" / "raw_base.csv").open(encoding="utf-8") as base:
        rows = list(csv.reader(base))
    rows[3][rows[0].index("gpu__time_duration.sum")] = "inf"  # launch 1's duration: impossible
    page = tmp_path / "noted.csv"
    with page.open("w", encoding="utf-8", newline="") as out:
        csv.writer(out, quoting=csv.QUOTE_ALL).writerows(rows)
    dataset = tmp_path / "history"
    add(dataset, page, "c1", 1)
    (detail,) = dataset.glob("details/*/commit=c1/*.parquet")
    stored = pq.read_table(detail)
    texts = [dict(launch) for launch in stored.column("counter_texts").to_pylist()]
    assert "input_notes" not in texts[0] and "inf is not finite" in texts[1]["input_notes"]
    result = run_cli("history", "rebuild", str(dataset))
    assert result.returncode == 0 and "rebuilt 1 runs (2 launches)" in result.stderr, result.stderr
    assert pq.read_table(detail).equals(stored)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("show", "{d}/missing"), 3, "holds no history (launches/ is missing)"),
        (("add", "{d}", "{csv}", "--commit", "a/b"), 2, "commit 'a/b' cannot name a partition"),
        (
            ("add", "{d}", "{csv}", "--commit", "x", "--time", "yesterday"),
            2,
            "--time 'yesterday' is not ISO-8601",
        ),
        (("add", "{d}", "{csv}", "--commit", "x", "--label", "nokey"), 2, "--label 'nokey' is not KEY=VALUE"),
        (("show", "{d}", "--kernel", "("), 2, "--kernel '(' is not a regular expression"),
        (("show", "{d}", "--gpu", "h100-pcie"), 2, "\nhint: its GPUs: nvidia-h100-pcie-cc90-114sm\n"),
        (("check", "{d}", "--head", "nope"), 2, "commit nope has no run in"),
        (("check", "{d}", "--head", "c7", "--threshold", "0.05"), 2, "looks like a fraction"),
        (
            ("check", "{d}", "--head", "c7", "-o", "x.png"),
            2,
            "history check cannot write -o x.png (its suffix says png)",
        ),
        # a suffix of a format it does not write is refused, not written as the table under that name
        (
            ("show", "{d}", "-o", "{d}/trend.pdf"),
            2,
            "history show cannot write -o ",
        ),  # … (its suffix says pdf)
        (("check", "{d}", "--head", "c7", "-o", "{d}/x.parquet"), 2, "(its suffix says parquet)"),
        (
            ("check", "{d}", "--head", "c7", "-o", "{d}/x.htm"),
            2,
            "(its suffix says html)\nhint: name a .txt, .json, .csv or .md",
        ),
    ],
)
def test_bad_usage_is_one_error_line(
    history: Path, tmp_path: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    filled = [a.format(d=history, csv=tmp_path / "c1.csv") for a in args]
    result = run_cli("history", *filled)
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith("error: ") and message in result.stderr and "\nhint: " in result.stderr


def test_errors_are_the_projects(tmp_path: Path) -> None:
    with pytest.raises(NcuRoofError, match=r"absent\.csv: No such file"):
        add_run(str(tmp_path / "h"), [str(tmp_path / "absent.csv")], Provenance("x", parse_time(None)))
    result = run_cli("history", "add", str(tmp_path / "h"), "-", "--commit", "x")
    assert result.returncode == 2 and "history add cannot read stdin" in result.stderr
    assert not (tmp_path / "h").exists()


def test_diff_gates_a_repeated_kernel_on_its_shift_and_interval(tmp_path: Path) -> None:
    base = run_csv(tmp_path, "base", 1.0, 1)
    slower = run_csv(tmp_path, "slower", 1.08, 2)
    result = run_cli("diff", str(base), str(slower), "--fail-on-regression", "5%")
    assert result.returncode == 1
    assert (
        f"1 kernel slower by more than 5% (worst {SILU} +" in result.stderr
        and "] at 99%: real, reaching 5%)" in result.stderr
    )
    # one launch in twelve 30 % slower, the rest as before: the pair rule fired, the shift does not
    lines = base.read_text(encoding="utf-8").splitlines()
    cells = next(csv.reader([lines[2]]))
    at = next(csv.reader([lines[0]])).index("gpu__time_duration.sum")
    cells[at] = f"{float(cells[at]) * 1.3:.0f}"
    spiked = tmp_path / "spiked.csv"
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(cells)
    spiked.write_text(
        "\n".join([*lines[:2], out.getvalue().rstrip("\n"), *lines[3:]]) + "\n", encoding="utf-8"
    )
    assert run_cli("diff", str(base), str(spiked), "--fail-on-regression", "5%").returncode == 0


def test_a_dataset_reached_through_a_pyarrow_filesystem_reads_as_a_local_one(history: Path) -> None:
    import pyarrow.fs as pafs

    from ncu_roof.history.query import History, durations, gpus_of, points, runs_rows

    local = History(store.open_dataset(str(history)))
    remote = History(store.Dataset(str(history), f"file://{history}", remote=pafs.LocalFileSystem()))
    assert points(remote, "silu", GPU, 3) == points(local, "silu", GPU, 3)
    assert len(points(local, "silu", GPU, 3)) == 3
    assert gpus_of(remote, "c7") == gpus_of(local, "c7") == [GPU]
    assert [r["commit"] for r in runs_rows(remote, GPU)] == [f"c{i}" for i in range(8)]
    assert runs_rows(remote, GPU) == runs_rows(local, GPU)
    near, far = durations(local, GPU, ["c6", "c7"]), durations(remote, GPU, ["c6", "c7"])
    assert (
        sorted(near["duration_s"].tolist()) == sorted(far["duration_s"].tolist())
        and len(near["duration_s"]) == 24
    )


def test_a_file_uri_is_a_dataset(tmp_path: Path) -> None:
    path = run_csv(tmp_path, "one", 1.0, 1)
    added = add_run(f"file://{tmp_path}/h", [str(path)], Provenance("c1", parse_time("2026-11-01")))
    assert added.new and added.gpus == (GPU,) and added.launches == LAUNCHES
    assert len(list((tmp_path / "h" / "launches" / f"gpu={GPU}" / "commit=c1").glob("*.parquet"))) == 1


def test_without_duckdb_show_says_which_extra_to_install(
    history: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "duckdb", None)  # an import of it raises ImportError
    result = run_cli("history", "show", str(history))
    assert result.returncode == 4
    assert (
        "DuckDB, which is not installed" in result.stderr
        and "pip install 'ncu-roof[history]'" in result.stderr
    )


def test_a_capture_that_measured_nothing_is_refused_and_the_dataset_kept(tmp_path: Path) -> None:
    """As `analyze`: every launch failed to collect → exit 3, and no run lands in the dataset."""
    dataset = tmp_path / "ds"
    failed = Path(__file__).resolve().parents[1] / "fixtures" / "raw_every_launch_failed.csv"
    result = run_cli("history", "add", str(dataset), str(failed), "--commit", "c0")
    assert result.returncode == 3, result.stderr
    assert "collection failed for every launch" in result.stderr
    assert not list(dataset.rglob("*.parquet"))


def test_a_file_where_the_dataset_belongs_is_an_error_naming_it(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("not a dataset", encoding="utf-8")
    raw = Path(__file__).resolve().parents[1] / "fixtures" / "raw_base.csv"
    result = run_cli("history", "add", str(taken), str(raw), "--commit", "c0")
    assert result.returncode == 1
    assert (
        result.stderr.startswith(f"error: cannot write to dataset {taken}")
        and "internal" not in result.stderr
    )
    assert taken.read_text(encoding="utf-8") == "not a dataset"


def test_rebuilding_a_folder_without_history_says_so(tmp_path: Path) -> None:
    result = run_cli("history", "rebuild", str(tmp_path / "none"))
    assert result.returncode == 3 and "holds no history" in result.stderr


def test_a_head_gpu_with_no_earlier_commit_names_the_other_gpu_keys(tmp_path: Path) -> None:
    # an A100 CSV at c1, an H200 report at c2: c2's GPU has nothing to compare with; the check
    # passes (nothing regressed) but says so, naming the key the earlier runs are filed under
    dataset = str(tmp_path / "ds")
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    first = ("history", "add", dataset, str(fixtures / "raw_base.csv"), "-q")
    assert run_cli(*first, "--commit", "c1", "--time", "2026-12-01T00:00:00Z").returncode == 0
    report = str(fixtures / "h200" / "h200_profile_vector_add_small.ncu-rep")
    second = ("history", "add", dataset, report, "-q", "--commit", "c2", "--time", "2026-12-02T00:00:00Z")
    assert run_cli(*second).returncode == 0
    result = run_cli("history", "check", dataset, "--head", "c2")
    assert result.returncode == 0
    assert "has no commit before c2, so nothing was compared" in result.stderr
    assert "other GPU keys: nvidia-a100-sxm4-40gb-cc80" in result.stderr
    assert "warning" not in run_cli("history", "check", dataset, "--head", "c2", "-q").stderr


def test_check_counts_a_runs_copies_of_one_average_once_and_every_other_launch() -> None:
    from ncu_roof.base.shift import runs_shift
    from ncu_roof.history.check import _grouped

    # run s: a --print-summary's "Invocations 3" (one average, copied); run t: three launches, two
    # of them measured alike (ncu's 32 ns steps): each a measurement
    columns = {
        "name": np.array(["k"] * 6, dtype=object),
        "grid": np.array([None] * 6, dtype=object),
        "block": np.array([None] * 6, dtype=object),
        "commit": np.array(["c1"] * 6, dtype=object),
        "run_id": np.array(["s", "s", "s", "t", "t", "t"], dtype=object),
        "duration_s": np.array([2e-3, 2e-3, 2e-3, 1e-3, 1e-3, 1.1e-3]),
    }
    runs = _grouped(columns)[("k", None, None)]["c1"]
    assert [r.tolist() for r in runs] == [[2e-3, 2e-3, 2e-3], [1e-3, 1e-3, 1.1e-3]]
    found = runs_shift(runs, [np.array([1e-3, 1.2e-3])])
    assert found is not None and (found.head_n, found.base_n) == (4, 2)


def test_check_counts_every_launch_of_a_summary_not_its_one_average(tmp_path: Path) -> None:
    # the summary's tiled kernel ran 3 times ("Invocations 3"), warp_reduce once: the JSON counts
    # launches (it counted each run's one average: 1 and 1), the reason the measurements
    dataset = tmp_path / "ds"
    summary = Path(__file__).resolve().parents[1] / "fixtures" / "summary_per_kernel.csv"
    add(dataset, summary, "c1", 1)
    add(dataset, summary, "c2", 2)
    result = run_cli("history", "check", str(dataset), "--head", "c2", "-F", "json")
    assert result.returncode == 0, result.stderr
    movements = json.loads(result.stdout)["movements"]
    counts = {m["name"][:11]: (m["head_launches"], m["baseline_launches"]) for m in movements}
    assert counts == {"void tiled<": (3, 3), "warp_reduce": (1, 1)}
    assert {m["reason"] for m in movements} == {"too few durations for an interval at 99% (1 vs 1)"}


def test_show_and_check_read_every_suffix_of_their_formats(history: Path, tmp_path: Path) -> None:
    # `.markdown`, `.htm`: as analyze reads them (they were written as the table)
    for command, name, start in (
        (("show",), "trend.markdown", "**ncu-roof history**"),
        (("show",), "trend.htm", "<!doctype html>"),
        (("check", "--head", "c7"), "comment.markdown", "<!-- ncu-roof history check -->"),
    ):
        out = tmp_path / name
        result = run_cli("history", command[0], str(history), *command[1:], "-o", str(out))
        assert result.returncode in (0, 1), result.stderr
        assert out.read_text().startswith(start), out.read_text()[:80]


def test_check_table_fits_80_columns(history: Path) -> None:
    # its headline (132 characters) ran past an 80-column terminal, the table below it fitting
    result = run_cli("history", "check", str(history), "--head", "c7", env={"COLUMNS": "80"})
    assert result.returncode in (0, 1), result.stderr
    assert max(len(line) for line in result.stdout.splitlines()) <= 80, result.stdout
    assert result.stdout.startswith("history check of c7: ")


def test_check_header_never_splits_a_gpu_key_at_its_hyphens() -> None:
    from ncu_roof.history.check import CheckResult, GpuBaseline
    from ncu_roof.render.historyout import check_table

    # at 24 columns the key's line must fold: it was folded inside the key, after "nvidia-h100-"
    key = "nvidia-h100-sxm-cc90-132sm"
    result = CheckResult("c9", 5.0, 0.99, (GpuBaseline(key, ("c8",), None),), ())
    header = check_table(result, 24).split("\n\n")[0].splitlines()
    assert [line.strip() for line in header[-2:]] == [f"{key}:", "baseline 1 commit"], header


def test_a_txt_output_takes_any_format_as_every_command_does(history: Path, tmp_path: Path) -> None:
    # `.txt` names no format (analyze --format json -o out.txt writes JSON): it was "--format json
    # contradicts -o out.txt" once the history commands read suffixes as every command does
    out = tmp_path / "check.txt"
    result = run_cli("history", "check", str(history), "--head", "c7", "--format", "json", "-o", str(out))
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(out.read_text())["schema"] == "ncu-roof/history-check/v1"
    result = run_cli("history", "show", str(history), "--format", "csv", "-o", str(tmp_path / "show.txt"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "show.txt").read_text().startswith("name,grid,block,gpu,commit,")


def test_the_counters_keep_a_metric_whose_name_reads_as_a_pattern() -> None:
    """A column named `^id$` (a hand-made header) is stored under its own name with its own
    values, and read back as it was: a name is never a pattern of column names."""
    from dataclasses import replace

    import polars as pl
    import pyarrow as pa

    from ncu_roof.history.counters import NUMBERS, counter_columns, tables_of
    from ncu_roof.ingest import read_input

    table = read_input(example_path())
    rows = table.rows
    hostile = table.launches.hstack([pl.Series("^id$", [100.0 + i for i in range(rows)])])
    columns = counter_columns([replace(table, launches=hostile)])
    first = dict(columns[NUMBERS].to_pylist()[0])
    assert first["^id$"] == 100.0 and first["id"] == hostile.item(0, "id")
    sources = {"input_path": table.path, "input_format": table.format.value, "ncu_version": table.ncu_version}
    stored = pa.table({**columns, **{k: [v] * rows for k, v in sources.items()}})

    def pairs(frame: pl.DataFrame) -> set[tuple[object, object]]:  # each launch's ID and `^id$`
        return set(zip(frame.get_column("id").to_list(), frame.get_column("^id$").to_list(), strict=True))

    assert set().union(*(pairs(t.launches) for t in tables_of(stored))) == pairs(hostile)
