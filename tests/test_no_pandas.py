"""Reading a CSV page or console text, and writing the Parquet export, load no pandas (~0.35 s of
imports that pyarrow's own conversions pay for)."""

from __future__ import annotations

from pathlib import Path

from conftest import modules_loaded_after_each, modules_loaded_by

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_the_parquet_export_loads_no_pandas(tmp_path: Path) -> None:
    out = tmp_path / "runs.parquet"
    args = ["analyze", str(FIXTURES / "raw_nvtx.csv"), "--format", "parquet", "-o", str(out)]
    assert modules_loaded_by(args, {"pandas"}) == set()
    assert out.stat().st_size > 0


READ = [
    "raw_base.csv",  # pyarrow's read
    "damaged",  # raw_base.csv with a short row: the csv module's read, then a Polars column
    "raw_base_de_DE.csv",  # the careful number parse
    "verdict_tensor_gemm_na_variant.csv",  # a column of n/a only: no chunk left to convert
    "raw_two_runs_with_app_output.csv",
    "console_details_2024.txt",  # parse_numbers of console text
    "details_de_CH.csv",  # the details page, pivoted by numpy
    "summary_per_kernel.csv",
]


def test_reading_csv_or_console_text_loads_no_pandas(tmp_path: Path) -> None:
    """pyarrow imports pandas (~0.35 s) on its first `to_numpy`, `pa.array` or Python scalar; the
    readers convert through Polars instead, so a CSV page is analyzed without pandas. One process
    analyzes each input in turn (a process each cost ~0.65 s): the first input after which pandas is
    loaded is the one whose read imported it."""
    runs: dict[str, list[str]] = {}
    for given_input in READ:
        path = FIXTURES / given_input
        if given_input == "damaged":
            lines = (FIXTURES / "raw_base.csv").read_text(encoding="utf-8").splitlines(keepends=True)
            path = tmp_path / "damaged.csv"
            path.write_text("".join([*lines[:3], '"99","1","app"\n', *lines[3:]]), encoding="utf-8")
        out = tmp_path / f"{given_input}.json"
        runs[given_input] = ["analyze", str(path), "--skip-bad-rows", "--format", "json", "-o", str(out)]
    loaded = modules_loaded_after_each(list(runs.values()), {"pandas"})
    # every input after which pandas is loaded: the first of them is the one whose read loaded it
    assert [given for given, names in zip(READ, loaded, strict=True) if names] == []
    for given_input in READ:
        assert '"kernels": [' in (tmp_path / f"{given_input}.json").read_text(encoding="utf-8"), given_input
