"""`analyze --format parquet`: the launch table, readable by pyarrow and queryable by DuckDB."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import CORPUS, run_cli

import ncu_roof
from ncu_roof.render.formats import METADATA_KEY

BASE = "reexport/a10g_rep_2023.1.1_roofline-set.ncu2024.1-raw-base.csv"  # ncu 2024.1 re-export
HEAD = "a10g_rep_2023.1.1_roofline-set.ncu-rep"  # the same run, read from the report itself


def analyze_to(path: Path, *inputs: str | Path) -> None:
    done = run_cli("analyze", *map(str, inputs), "-F", "parquet", "-o", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


@pytest.fixture(scope="module")
def base_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`analyze BASE -F parquet -o base.parquet`, once for the tests below (read only)."""
    if not (CORPUS / "MANIFEST.md").is_file():
        pytest.skip(f"ncu corpus not found at {CORPUS}")
    out = tmp_path_factory.mktemp("parquet") / "base.parquet"
    analyze_to(out, CORPUS / BASE)
    return out


def test_parquet_is_the_arrow_table_plus_its_header(corpus: Path, base_parquet: Path) -> None:
    table = pq.read_table(base_parquet)
    expected = ncu_roof.analyze(corpus / BASE).to_arrow()
    assert table.column_names == expected.column_names
    assert table.to_pylist() == expected.to_pylist()
    header = json.loads(table.schema.metadata[METADATA_KEY])
    assert header["schema"] == "ncu-roof/analysis/v1"
    assert header["inputs"][0]["kernels"] == 4
    assert header["devices"][0]["name"] == "NVIDIA A10G"
    row = table.slice(0, 1).to_pylist()[0]
    assert row["duration_s"] == pytest.approx(431_648e-9, rel=1e-12)  # gpu__time_duration.sum, ns
    assert row["l2_bytes"] == pytest.approx(1.294161e8, rel=1e-6)  # l1tex__m_xbar2l1tex_read_bytes (2023.x)
    assert row["shared_bytes"] is None  # not collected: null, never 0
    assert row["input_path"] == str(corpus / BASE)


def test_duckdb_queries_two_runs(corpus: Path, base_parquet: Path, tmp_path: Path) -> None:
    import duckdb  # here, not at collection: each worker would import it

    analyze_to(tmp_path / "head.parquet", corpus / HEAD)
    files = [str(base_parquet), str(tmp_path / "head.parquet")]
    con = duckdb.connect()  # its own connection: nothing shared with other tests
    rows = con.execute(
        "SELECT ncu_version, input_format, count(*), sum(duration_s) "
        "FROM read_parquet(?, union_by_name = true) GROUP BY ALL ORDER BY input_format",
        [files],
    ).fetchall()
    total_s = (431_648 + 296_704 + 260_512 + 222_464) * 1e-9  # the four launches' durations
    assert [(v, f, n) for v, f, n, _ in rows] == [("2023.1.1.0", "ncu-rep", 4), (None, "raw-csv", 4)]
    assert all(t == pytest.approx(total_s, rel=1e-12) for *_, t in rows)
    same = con.execute(
        "SELECT count(*) FROM read_parquet(?) a JOIN read_parquet(?) b USING (id) "
        "WHERE a.bound = b.bound AND abs(a.duration_s - b.duration_s) < 1e-12",
        [files[0], files[1]],
    ).fetchall()
    assert same == [(4,)]


def test_parquet_is_not_written_to_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from ncu_roof.cli.analyze import AnalyzeOptions, emit
    from ncu_roof.errors import UsageError
    from ncu_roof.render.formats import OutputFormat

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    with pytest.raises(UsageError, match="binary") as err:
        emit([ncu_roof.example_path()], AnalyzeOptions(format=OutputFormat.PARQUET))
    assert "-o" in err.value.hint
