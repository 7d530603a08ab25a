"""`ncu-roof history`: what a run is (its GPU partition, its identity when added again) and the
kernel groups that ran on one side only (new, missing at the head). Runs are the example report's
H100 block rewritten: kernels renamed, the device made one no table knows."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import run_cli
from hypothesis import given
from hypothesis import strategies as st
from test_schemas import assert_valid

from ncu_roof.history.record import gpu_key
from ncu_roof.history.store import PARTITION_VALUE
from ncu_roof.pipeline import example_path

H100 = "nvidia-h100-pcie-cc90-114sm"
LAUNCHES = 12  # of each kernel
DEVICE = {"device__attribute_display_name": "NVIDIA H100 PCIe", "CC": "9.0"}
SMS = ("device__attribute_multiprocessor_count", "launch__sm_count")


def run_csv(
    folder: Path,
    name: str,
    kernels: Sequence[str],
    seed: int,
    factor: float = 1.0,
    device: Mapping[str, str] | None = None,
) -> Path:
    """A raw page of `LAUNCHES` launches of each kernel (the example's silu launch renamed, ±1 %
    jitter, durations × `factor`), on the device `device` names (its columns: `DEVICE`, `SMS`)."""
    lines = Path(example_path()).read_text(encoding="utf-8").splitlines()
    rows = list(csv.reader(lines[1:6]))
    header, units, template = rows[0], rows[1], rows[2]
    jitter = iter(np.random.default_rng(seed).normal(0.0, 0.01, LAUNCHES * len(kernels)).tolist())
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerows([header, units])
    launch = 0
    for kernel in kernels:
        for _ in range(LAUNCHES):
            row = list(template)
            cells = {"ID": str(launch), "Kernel Name": kernel, **DEVICE, **(device or {})}
            at = header.index("gpu__time_duration.sum")
            cells["gpu__time_duration.sum"] = f"{float(row[at]) * factor * (1 + next(jitter)):.0f}"
            for column, value in cells.items():
                row[header.index(column)] = value
            writer.writerow(row)
            launch += 1
    path = folder / f"{name}.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def add(dataset: Path, path: Path, commit: str, *extra: str) -> str:
    result = run_cli("history", "add", str(dataset), str(path), "--commit", commit, *extra)
    assert result.returncode == 0, result.stderr
    return result.stderr


def files_of(dataset: Path) -> dict[str, bytes]:
    return {str(p.relative_to(dataset)): p.read_bytes() for p in sorted(dataset.rglob("*")) if p.is_file()}


def test_a_kernel_new_or_missing_at_the_head_is_reported_and_never_a_regression(tmp_path: Path) -> None:
    dataset = tmp_path / "h"
    for day in range(1, 4):
        path = run_csv(tmp_path, f"c{day}", ["gemm(int)", "softmax(int)"], day)
        add(dataset, path, f"c{day}", "--time", f"2026-11-0{day}")
    add(dataset, run_csv(tmp_path, "head", ["gemm(int)", "fused(int)"], 9), "head", "--time", "2026-11-09")
    result = run_cli("history", "check", str(dataset), "--head", "head", "-F", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert_valid("history-check.v1", doc)
    by_name = {m["name"]: m for m in doc["movements"]}
    assert [m["class"] for m in doc["movements"]] == ["missing at head", "new", "noise"]
    missing, new = by_name["softmax(int)"], by_name["fused(int)"]
    assert (missing["head_launches"], missing["baseline_launches"], missing["baseline_commits"]) == (0, 36, 3)
    assert (missing["shift_pct"], missing["interval_pct"], missing["last_good"]) == (None, None, "c3")
    assert missing["reason"] == "ran at 3 of 3 baseline commits (newest c3)"
    assert (new["head_launches"], new["baseline_launches"], new["baseline_commits"]) == (12, 0, 0)
    assert (new["shift_pct"], new["last_good"]) == (None, None)
    assert new["reason"] == "ran at the head and in none of the 3 baseline commits"
    assert doc["counts"] == {
        **dict.fromkeys(("regression", "improvement", "method change", "hardware change"), 0),
        **{"missing at head": 1, "new": 1, "noise": 1},
    }
    table = run_cli("history", "check", str(dataset), "--head", "head").stdout
    assert "missing at head  softmax(int)" in table and "new              fused(int)" in table
    markdown = run_cli("history", "check", str(dataset), "--head", "head", "-F", "markdown").stdout
    movements = markdown.split("### Movements")[1].split("<details>")[0]
    assert "| missing at head | `softmax(int)` |" in movements and "| new | `fused(int)` |" in movements
    assert "**ncu-roof history check: no kernel regressed" in markdown


def test_the_gpu_partition_is_what_the_run_recorded(tmp_path: Path) -> None:
    """A device no built-in table knows gets a partition of its own, from its name, CC and SM
    count; the key is the same whatever table a later version ships (no table is read)."""
    unknown = {
        "device__attribute_display_name": "ACME Tensor Slab X9",
        "CC": "12.1",
        SMS[0]: "77",
        SMS[1]: "77",
    }
    dataset = tmp_path / "h"
    add(dataset, run_csv(tmp_path, "a", ["gemm(int)"], 1, device=unknown), "a", "--time", "2026-11-01")
    add(dataset, run_csv(tmp_path, "b", ["gemm(int)"], 2), "a", "--time", "2026-11-01")
    assert sorted(p.name for p in (dataset / "launches").iterdir()) == [
        "gpu=acme-tensor-slab-x9-cc121-77sm",
        f"gpu={H100}",
    ]
    import duckdb

    rows = duckdb.execute(
        f"SELECT gpu, device_name, cc, sm_count, gpu_sku FROM '{dataset}/runs/*/*.parquet' ORDER BY gpu"
    ).fetchall()
    assert rows == [
        ("acme-tensor-slab-x9-cc121-77sm", "ACME Tensor Slab X9", "12.1", 77.0, None),
        (H100, "NVIDIA H100 PCIe", "9.0", 114.0, "h100-pcie"),
    ]


@pytest.mark.parametrize(
    ("columns", "key"),
    [
        ({"device_name": ["NVIDIA H100 PCIe"], "cc": ["9.0"], SMS[0]: [114.0]}, H100),
        (
            {"device_name": ["NVIDIA A100-SXM4-80GB"], "cc": ["8.0"], SMS[1]: [108.0]},
            "nvidia-a100-sxm4-80gb-cc80-108sm",
        ),
        ({"device_name": [None], "cc": ["8.6"], SMS[0]: [float("nan")]}, "unknown-cc86"),
        ({"device_name": ["GH200 / 480GB"], "cc": [None]}, "gh200-480gb"),
        ({"device_name": [None], "cc": [None]}, "unknown"),
        ({"device_name": ["x" * 200], "cc": ["9.0"], SMS[0]: [132.0]}, "x" * 117 + "-cc90-132sm"),
    ],
)
def test_the_gpu_key_is_a_slug_of_the_recorded_name_cc_and_sm_count(
    columns: dict[str, list[object]], key: str
) -> None:
    kinds = {c: pl.Float64 if c in SMS else pl.String for c in columns}
    assert gpu_key(pl.DataFrame(columns, schema=kinds)) == key
    assert len(key) <= 128


@given(
    st.one_of(st.none(), st.text(max_size=300)),
    st.one_of(st.none(), st.text(max_size=200)),
    st.one_of(st.just(float("nan")), st.floats(1, 1e300)),
)
def test_every_recorded_device_has_a_key_that_can_name_a_partition(
    name: str | None, cc: str | None, sms: float
) -> None:
    columns = {"device_name": pl.Series([name], dtype=pl.String), "cc": pl.Series([cc], dtype=pl.String)}
    key = gpu_key(pl.DataFrame({**columns, SMS[0]: [sms]}))
    assert PARTITION_VALUE.fullmatch(key), key  # `history add` never refuses a device's key


def test_a_re_add_stating_another_time_or_gpu_is_refused_and_replace_rewrites_it(tmp_path: Path) -> None:
    dataset = tmp_path / "h"
    path = run_csv(tmp_path, "run", ["gemm(int)"], 1)
    add(dataset, path, "c1", "--time", "2026-11-01T12:00:00Z", "--branch", "main")
    before = files_of(dataset)
    again = add(dataset, path, "c1", "--time", "2026-11-01T12:00:00Z", "--branch", "main")
    assert "nothing written" in again and files_of(dataset) == before  # identical: nothing changes
    assert "nothing written" in add(dataset, path, "c1") and files_of(dataset) == before  # nothing stated
    for option, value, said in (
        (
            "--time",
            "2026-11-02T12:00:00Z",
            "--time 2026-11-02T12:00:00+00:00 (stored: 2026-11-01T12:00:00+00:00)",
        ),
        ("--gpu", "h100-sxm", "--gpu h100-sxm (stored: none)"),
    ):
        result = run_cli("history", "add", str(dataset), str(path), "--commit", "c1", option, value)
        assert result.returncode == 2 and result.stderr.startswith("error: run ") and said in result.stderr
        assert "hint: the same files of the same commit are one run: add --replace" in result.stderr
        assert files_of(dataset) == before
    replaced = add(dataset, path, "c1", "--time", "2026-11-02T12:00:00Z", "--gpu", "h100-sxm", "--replace")
    assert replaced.startswith("replaced run ")
    import duckdb

    runs = duckdb.execute(f"SELECT time, roofs_gpu, branch FROM '{dataset}/runs/*/*.parquet'").fetchall()
    assert [(t.isoformat()[:19], g, b) for t, g, b in runs] == [("2026-11-02T12:00:00", "h100-sxm", None)]
    times = duckdb.execute(f"SELECT DISTINCT time FROM '{dataset}/launches/*/*/*.parquet'").fetchall()
    assert [t.isoformat()[:19] for (t,) in times] == ["2026-11-02T12:00:00"]
    assert sorted(files_of(dataset)) == sorted(before)  # the same files, rewritten: no second run


def test_a_baseline_of_one_commit_reads_as_one(tmp_path: Path) -> None:
    """The table's baseline line counts its commits in words that agree: `baseline 1 commit`."""
    dataset = tmp_path / "h"
    add(dataset, run_csv(tmp_path, "c1", ["gemm(int)"], 1), "c1", "--time", "2026-11-01")
    add(dataset, run_csv(tmp_path, "head", ["gemm(int)"], 2), "head", "--time", "2026-11-02")
    result = run_cli("history", "check", str(dataset), "--head", "head")
    assert result.returncode == 0, result.stderr
    assert f"  {H100}: baseline 1 commit\n" in result.stdout


def test_a_head_within_the_drift_between_baseline_runs_is_noise(tmp_path: Path) -> None:
    # five commits whose runs drift by -4 % to +4 % (±1 % launch jitter), a head 6 % slower: its
    # launches' interval lies above 0 ([+3.3%, +8.4%]: a regression, the baseline's launches taken
    # as one sample), but the baseline's runs drift that far: noise, the reason giving the band
    dataset = tmp_path / "h"
    for day, factor in enumerate((0.96, 0.98, 1.0, 1.02, 1.04), start=1):
        path = run_csv(tmp_path, f"c{day}", ["gemm(int)"], day, factor)
        add(dataset, path, f"c{day}", "--time", f"2026-11-0{day}")
    add(dataset, run_csv(tmp_path, "head", ["gemm(int)"], 9, 1.06), "head", "--time", "2026-11-09")
    result = run_cli("history", "check", str(dataset), "--head", "head", "-F", "json")
    assert result.returncode == 0, result.stderr
    (moved,) = json.loads(result.stdout)["movements"]
    assert moved["class"] == "noise" and 5 < moved["shift_pct"] < 7 and moved["interval_pct"][0] < 0
    band = re.search(r"drift ±(\d+\.\d)%", moved["reason"])
    assert band is not None and f"{moved['drift_pct']:.1f}" == band[1] and moved["drift_pct"] > 2
    assert re.fullmatch(
        r"\+6\.0% \[-\d+\.\d%, \+\d+\.\d%\] at 99%: the interval holds 0; 12 durations vs 60 over 5 commits;"
        r" run-to-run drift ±\d+\.\d% from 5 baseline runs",
        moved["reason"],
    ), moved["reason"]
    # against c1 alone, no drift to see: the launches' interval, and the reason says so
    result = run_cli("history", "check", str(dataset), "--head", "c2", "-F", "json")
    (moved,) = json.loads(result.stdout)["movements"]
    assert moved["reason"].endswith("vs 12 over 1 commit; run-to-run drift not estimated (1 baseline run)")
    assert moved["drift_pct"] is None
