"""`--format csv` read back with the csv module: every column the JSON kernel objects and the
launch table (`to_arrow()`, Parquet) hold, with the values the JSON gives them."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import ROOT, analyzed, read_result, run_cli
from hypothesis import given
from hypothesis import strategies as st

from ncu_roof.analysis import core
from ncu_roof.analysis.launches import LEAD, MAP_COLUMNS, launch_table
from ncu_roof.api import Analysis
from ncu_roof.base.vocabulary import PRECISIONS, SOL_KEYS, TIERS
from ncu_roof.errors import NcuRoofError
from ncu_roof.render.csvout import _cells, csv_pieces, render_csv
from ncu_roof.render.jsonout import render_json
from ncu_roof.render.text import csv_cell

SILU = "h100pcie_rep_2025.1_full_silu.ncu-rep"  # 3 launches, FLOP totals lower bounds (fp16 partial)
INT8 = "verdict_int8_gemm.csv"  # integer tensor operations set the compute ceiling


def read_csv(text: str) -> tuple[list[str], list[dict[str, str]]]:
    header = next(csv.reader(io.StringIO(text)))
    return header, list(csv.DictReader(io.StringIO(text)))


def cli_json_and_csv(*args: str) -> tuple[dict[str, Any], list[str], list[dict[str, str]]]:
    """`analyze ARGS` as JSON and as CSV (read back)."""
    as_json = run_cli("analyze", *args, "--format", "json")
    as_csv = run_cli("analyze", *args, "--format", "csv")
    assert as_json.returncode == as_csv.returncode == 0, as_json.stderr + as_csv.stderr
    return json.loads(as_json.stdout), *read_csv(as_csv.stdout)


def number(cell: str) -> float | None:
    return None if cell == "" else float(cell)


def as_csv_number(value: float | None) -> float | None:
    """What the CSV holds of a JSON number: 15 significant digits."""
    return None if value is None else float(f"{value:.15g}")


def as_csv_count(value: float | None) -> float | None:
    """What the CSV holds of a JSON count (FLOPs, bytes, operations): the nearest whole number."""
    return None if value is None else float(round(value))


def count_cell(cell: str) -> bool:
    """A count cell is a whole number written without a fraction (`1409284050`), or empty."""
    return cell == "" or cell.isdigit()


def flag(cell: str) -> bool:
    assert cell in ("true", "false"), cell
    return cell == "true"


def text(value: str | None) -> str:
    return "" if value is None else csv_cell(value)


def json_cell(cell: str) -> Any:
    return None if cell == "" else json.loads(cell)


def mapping_columns(header: list[str], field: str) -> set[str]:
    """The keys of a flattened mapping's columns (`dram_cap_flop_per_s` → `dram`)."""
    prefix, _, suffix = MAP_COLUMNS[field].partition("{}")
    return {
        c[len(prefix) : len(c) - len(suffix)]
        for c in header
        if c.startswith(prefix) and c.endswith(suffix) and c != "ops_total_is_lower_bound"
    }


def column(field: str, key: str) -> str:
    return MAP_COLUMNS[field].format(key)


def mismatches(document: dict[str, Any], header: list[str], rows: list[dict[str, str]]) -> list[str]:
    """Where the CSV says something else than the JSON document, column by column."""
    kernels = document["kernels"]
    found: list[str] = []

    def check(j: int, column: str, got: Any, expected: Any) -> None:
        if got != expected:
            found.append(f"kernel {j} {column}: CSV {got!r}, JSON {expected!r}")

    if len(rows) != len(kernels):
        return [f"{len(rows)} rows for {len(kernels)} kernels"]
    maps = ("cap_flop_per_s", "achieved_byte_per_s", "ops", "pipe_pct", "recipe")
    for field in maps:  # a column for each key some launch has, and none else
        keys = set().union(*(k[field] for k in kernels)) if kernels else set()
        check(-1, f"{field}_*", mapping_columns(header, field), keys)
    devices = {d["index"]: d for d in document["devices"]}
    for j, (k, row) in enumerate(zip(kernels, rows, strict=True)):
        # the columns the CSV has always had
        for key in ("id", "input", "device"):
            check(j, key, int(row[key]), k[key])
        for key in ("name", "grid", "block", "nvtx", "binding", "bound", "compute_precision"):
            check(j, key, row[key], text(k[key]))
        for key in (
            "duration_s",
            "time_share",
            "achieved_flop_per_s",
            "attainable_flop_per_s",
            "pct_of_roof",
        ):
            check(j, key, number(row[key]), as_csv_number(k[key]))
        counts = [(f"flop_{p}", k["flop"][p]) for p in (*PRECISIONS, "total")]
        counts += [(f"{t}_bytes", k["bytes"][t]) for t in TIERS]
        for name, value in counts:
            check(j, name, count_cell(row[name]) and number(row[name]), as_csv_count(value))
        nested = [(f"{t}_intensity_flop_per_byte", k["intensity_flop_per_byte"][t]) for t in TIERS]
        nested += [(f"sol_{s}_pct", k["sol_pct"][s]) for s in SOL_KEYS]
        nested += [(f"{t}_bandwidth_pct", k["pct_of_bandwidth"][t]) for t in TIERS]
        nested += [("headroom_s", k["headroom_s"]), ("headroom_sol_s", k["headroom_sol_s"])]
        for name, value in nested:
            check(j, name, number(row[name]), as_csv_number(value))
        check(j, "notes", row["notes"], text("; ".join(k["notes"])) if k["notes"] else "")
        # the columns it lacked
        for key in ("above_roof", "flop_total_is_lower_bound", "ops_total_is_lower_bound"):
            check(j, key, flag(row[key]), k[key])
        for key in ("verdict_basis", "compute_ceiling", "sol_busiest_unit"):
            check(j, key, row[key], text(k[key]))
        check(
            j,
            "compute_ceiling_pct",
            number(row["compute_ceiling_pct"]),
            as_csv_number(k["compute_ceiling_pct"]),
        )
        check(j, "run", int(row["run"]), k["run"])
        check(j, "sol_bound", row["sol_bound"], k["sol_verdict"]["bound"])
        check(j, "sol_unit", row["sol_unit"], text(k["sol_verdict"]["unit"]))
        check(j, "small_grid", flag(row["small_grid"]), k["sol_verdict"]["small_grid"])
        for field in maps:
            for key in mapping_columns(header, field):
                name, value = column(field, key), k[field].get(key)
                if field == "recipe":
                    check(j, name, row[name], text(value))
                elif field == "ops":
                    check(j, name, count_cell(row[name]) and number(row[name]), as_csv_count(value))
                else:
                    check(j, name, number(row[name]), as_csv_number(value))
        for key in ("traffic", "tensor_paths", "not_collected"):
            check(j, key, json_cell(row[key]), k[key])
        instructions = k["instruction_roofline"]
        if instructions is not None:  # the launch table holds the record's fields
            instructions = {f: v for f, v in instructions.items() if f != "transaction_bytes"}
        check(j, "instructions", json_cell(row["instructions"]), instructions)
        # what its input and device say
        given = document["inputs"][k["input"]]
        check(j, "input_path", row["input_path"], text(given["path"]))
        check(j, "input_format", row["input_format"], given["format"])
        check(j, "ncu_version", row["ncu_version"], text(given["ncu_version"]))
        device = devices[k["device"]]
        check(j, "device_name", row["device_name"], text(device["name"]))
        check(j, "device_cc", row["device_cc"], text(device["cc"]))
        check(
            j, "device_sm_clock_hz", number(row["device_sm_clock_hz"]), as_csv_number(device["sm_clock_hz"])
        )
        check(j, "roof_source", row["roof_source"], text(device["roof_source"]))
        for kind, unit in (("compute_flop_per_s", "flop_per_s"), ("bandwidth_byte_per_s", "byte_per_s")):
            for key, value in device["roofs"][kind].items():
                name = f"device_roof_{key}_{unit}"
                check(j, name, number(row[name]), as_csv_number(value))
    return found


def expected_header(analysis: core.Analysis) -> list[str]:
    """The CSV's columns: the launch table's, in its order, its first ones those it always had."""
    header = launch_table(analysis).columns
    assert header[: len(LEAD)] == list(LEAD)
    return header


def documented_columns() -> re.Pattern[str]:
    """The columns docs/analysis-schema.md's CSV paragraph names, as one pattern (`<tier>`,
    `<a|b>` and the like stand for their keys)."""
    doc = (ROOT / "docs" / "analysis-schema.md").read_text(encoding="utf-8")
    paragraph = doc[doc.index("* `--format csv`") :].split("\n\n")[0]
    words = {"tier": "|".join(TIERS), "precision": "|".join(PRECISIONS), "quantity": r"\w+"}
    words |= {"pipe": r"\w+", "path": r"\w+"}
    names = []
    for span in re.findall(r"`([^`]+)`", paragraph):
        for name in re.sub(r"\s+", " ", span).split(", "):
            if re.fullmatch(r"[a-z_<>|0-9]+", name):
                parts = re.split(r"<([^>]+)>", name)  # literal, placeholder, literal, …
                names.append(
                    "".join(
                        re.escape(part)
                        if i % 2 == 0
                        else "(" + "|".join(words.get(w, w) for w in part.split("|")) + ")"
                        for i, part in enumerate(parts)
                    )
                )
    return re.compile("|".join(names))


# --------------------------------------------------------------------------- a project fixture


def test_the_schema_doc_names_every_csv_column(fixtures: Path) -> None:
    pattern = documented_columns()
    assert pattern.fullmatch("compute_cap_flop_per_s") and not pattern.fullmatch("x_cap_flop_per_s")
    for path in [ROOT / "ncu_roof" / "data" / "example.csv", *sorted(fixtures.glob("verdict_*.csv"))]:
        header, _ = read_csv(render_csv(analyzed(path)))
        assert [c for c in header if not pattern.fullmatch(c)] == [], path.name


def test_a_fixture_csv_has_the_json_fields(fixtures: Path) -> None:
    document, header, rows = cli_json_and_csv(str(fixtures / INT8))
    assert mismatches(document, header, rows) == []
    (row,) = rows
    assert header[: len(LEAD)] == list(LEAD) and header[len(LEAD) - 4] == "headroom_s"
    assert row["group_id"] == "0" and row["fix_first_rank"] == "1"  # one kernel, with headroom
    assert row["flop_total_is_lower_bound"] == "true"  # fp64, fp16, tensor FLOPs not collected
    assert row["ops_total_is_lower_bound"] == "false" and row["above_roof"] == "false"
    assert row["verdict_basis"] == "roofline" and row["bound"] == "compute"
    assert row["compute_ceiling"] == "tensor:int8" and number(row["compute_ceiling_pct"]) == 76.2939453125
    assert row["ops_int8"] == row["ops_total"] == "40000000000"  # a count: a whole number
    keys = mapping_columns(header, "cap_flop_per_s")
    caps = {key: number(row[column("cap_flop_per_s", key)]) for key in keys}
    assert caps == document["kernels"][0]["cap_flop_per_s"]
    assert row["pipe_tensor_pct"] == "76.0" and row["dram_achieved_byte_per_s"] == "400000000000.0"
    assert json.loads(row["tensor_paths"])["int8"] == {"unit": "OP", "count": 4e10, "peak_per_s": 1048576e9}
    assert row["missing"] == "l2; l1; shared" and row["instructions"] == ""


@pytest.mark.parametrize("chunk", [1, 2, 3])
def test_the_csv_in_pieces_is_the_csv_whole_with_one_header(chunk: int) -> None:
    from ncu_roof.pipeline import example_path

    analysis = analyzed(Path(example_path()))  # 7 launches
    pieces = list(csv_pieces(analysis, chunk))
    assert len(pieces) == -(-len(analysis.kernels) // chunk) > 1
    assert b"".join(pieces) == b"".join(csv_pieces(analysis))
    header = pieces[0].split(b"\n")[0]
    assert header.startswith(b"id,") and not any(header in piece for piece in pieces[1:])
    assert render_csv(analysis).count("\n") == len(analysis.kernels) + 1


def test_a_launch_above_its_roof_says_so_and_claims_no_headroom(fixtures: Path) -> None:
    document, header, rows = cli_json_and_csv(str(fixtures / INT8), "--gpu", "t4")
    assert mismatches(document, header, rows) == []
    assert document["kernels"][0]["above_roof"] is True
    assert rows[0]["above_roof"] == "true" and number(rows[0]["pct_of_roof"]) == 312.5
    assert rows[0]["headroom_s"] == "" and rows[0]["roof_source"] == "builtin:t4"
    assert rows[0]["fix_first_rank"] == ""  # no headroom: not ranked


def test_the_csv_has_the_launch_tables_columns_and_values(fixtures: Path) -> None:
    """One vocabulary: the CSV's columns are `to_arrow()`'s, in its order, with the same values."""
    analysis = Analysis.of(analyzed(fixtures / INT8))
    header, rows = read_csv(render_csv(analysis))
    assert header == expected_header(analysis)
    assert len(set(header)) == len(header)
    table = analysis.to_arrow()
    assert table.column_names == header
    for name, values in zip(table.column_names, table.columns, strict=True):
        value, cell = values[0].as_py(), rows[0][name]
        if isinstance(value, bool):
            assert flag(cell) is value, name
        elif isinstance(value, float) or value is None:
            assert number(cell) == as_csv_number(value), name
        elif isinstance(value, list):
            assert cell == "; ".join(value), name
        else:
            assert cell == text(str(value)), name


def test_every_text_cell_is_guarded(fixtures: Path, tmp_path: Path) -> None:
    hostile = tmp_path / "=cmd|' calc'!A0.csv"
    hostile.write_bytes((fixtures / INT8).read_bytes())
    done = run_cli("analyze", hostile.name, "--format", "csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _, rows = read_csv(done.stdout)
    assert rows[0]["input_path"] == "'=cmd|' calc'!A0.csv"


FINITE = st.floats(allow_nan=False, allow_infinity=False)  # the table's: it holds no other (test_launches)
NUMBER = st.one_of(st.none(), FINITE, st.sampled_from([0.0, -0.0, 0.1 + 0.2, 1e16]))


@given(st.lists(st.tuples(NUMBER, NUMBER, NUMBER), max_size=30))
def test_number_cells_have_15_significant_digits_and_counts_are_whole(
    rows: list[tuple[float | None, float | None, float | None]],
) -> None:
    """Each cell as Python writes the float of its 15 significant digits, a count's the nearest
    whole; null empty (-0.0 kept apart from 0.0 where repeated values are written once), each
    column's own where two columns of a kind are made together."""
    columns = list(zip(*rows, strict=True)) if rows else [(), (), ()]
    names = ("duration_s", "flop_total", "l2_bytes")
    cells = _cells(
        pl.DataFrame([pl.Series(n, c, dtype=pl.Float64) for n, c in zip(names, columns, strict=True)])
    )
    assert cells.get_column("duration_s").to_list() == [
        None if v is None else repr(float(f"{v:.15g}")) for v in columns[0]
    ]
    for name, values in (("flop_total", columns[1]), ("l2_bytes", columns[2])):
        assert cells.get_column(name).to_list() == [None if v is None else str(round(v)) for v in values]


def test_text_cells_are_guarded_and_written_as_the_csv_module_writes_them() -> None:
    names = ["=cmd()", 'a "b", c', "", "line\nbreak", None, "plain", "-1"]
    frame = _cells(pl.DataFrame([pl.Series("name", names, dtype=pl.String), pl.Series("n", range(7))]))
    expected = io.StringIO()
    writer = csv.writer(expected, lineterminator="\n")
    writer.writerow(["name", "n"])
    writer.writerows(
        zip(["'=cmd()", 'a "b", c', "", "line break", "", "plain", "'-1"], range(7), strict=True)
    )
    assert frame.write_csv(null_value="", line_terminator="\n") == expected.getvalue()
    assert expected.getvalue().splitlines()[2] == '"a ""b"", c",1'


# ------------------------------------------------------------------------------------ the corpus


@pytest.mark.corpus
def test_a_corpus_csv_has_the_json_fields(corpus: Path) -> None:
    document, header, rows = cli_json_and_csv(str(corpus / SILU))
    assert mismatches(document, header, rows) == []
    assert [r["flop_total_is_lower_bound"] for r in rows] == ["true"] * 3
    assert [k["flop_total_is_lower_bound"] for k in document["kernels"]] == [True] * 3
    assert {r["compute_ceiling"] for r in rows} == {"pipe:xu"}
    for row, kernel in zip(rows, document["kernels"], strict=True):
        caps = {key: number(row[column("cap_flop_per_s", key)]) for key in kernel["cap_flop_per_s"]}
        assert caps == {key: as_csv_number(v) for key, v in kernel["cap_flop_per_s"].items()}
        assert number(row["attainable_flop_per_s"]) == min(v for v in caps.values() if v is not None)
        assert row["verdict_basis"] == "roofline" and row["above_roof"] == "false"
    above = cli_json_and_csv(str(corpus / SILU), "--gpu", "v100-pcie")
    assert mismatches(*above) == []
    assert [r["above_roof"] for r in above[2]] == ["true"] * 3
    assert [r["headroom_s"] for r in above[2]] == [""] * 3


@pytest.mark.corpus
def test_every_corpus_input_has_the_json_fields_in_its_csv(corpus: Path) -> None:
    """Over the whole corpus (reports, CSV pages, console text, reexport/): the CSV's columns are
    the launch table's, with the JSON's values."""
    inputs = sorted(p for p in [*corpus.iterdir(), *(corpus / "reexport").iterdir()] if p.suffix != ".md")
    found: list[str] = []
    checked = 0
    documented = documented_columns()
    for path in (p for p in inputs if p.is_file()):
        if isinstance(read_result(path), NcuRoofError):
            continue  # an input that holds no kernels (its error is tested elsewhere)
        analysis = analyzed(path)
        header, rows = read_csv(render_csv(analysis))
        if header != expected_header(analysis):
            found.append(f"{path.name}: header {header}")
        found += [f"{path.name}: {c} undocumented" for c in header if not documented.fullmatch(c)]
        found += [f"{path.name}: {m}" for m in mismatches(json.loads(render_json(analysis)), header, rows)]
        checked += 1
    assert checked >= 70
    assert found == []
