"""Readers on the project's own hand-written fixtures (fixtures/*.csv).

Kernel 0 of the raw fixtures, by hand: duration 12,345 ns = 12.345e-6 s; DRAM = read 1,048,576 B
+ write 524,288 B = 1,572,864 B; L2 4,194,304 B; L1 8,388,608 B; FP32 = (fadd 2 + fmul 1 + 2 x
ffma 4) inst/cycle x 1.5e9 cycle/s x 12.345e-6 s = 11 x 18,517.5 = 203,692.5 FLOP; FP64 = dadd
1,000 + dmul 500 + 2 x dfma 250 = 2,000 FLOP. Kernel 1: 2 ms; DRAM write `n/a`, so the counter
recipe is missing and rate x time gives 1e9 B/s x 2 ms = 2e6 B (never read + 0); L1 `n/a`;
FP32 = 0.5 x 1.5e9 x 2e-3 = 1.5e6 FLOP.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import cast

import pandas as pd
import pytest
from conftest import normalize

from ncu_roof.base.units import NumberStyle
from ncu_roof.errors import BadInputError
from ncu_roof.ingest import InputFormat, read_input
from ncu_roof.ingest.csvblocks import _HEADER, SUMMARY_HEADER, find_headers

RAW_FORMS = ["raw_base.csv", "raw_auto.csv", "raw_base_en_US.csv", "raw_base_de_DE.csv"]


def _norm(path: Path) -> pd.DataFrame:
    table = read_input(str(path))
    return normalize(table.frame[table.metric_columns])


@pytest.mark.parametrize("name", RAW_FORMS)
def test_raw_page_values(fixtures: Path, name: str) -> None:
    table = read_input(str(fixtures / name))
    assert table.format is InputFormat.RAW_CSV
    frame = table.frame
    assert frame["id"].tolist() == [0, 1]
    assert frame["name"].tolist() == ["void scale<float, 4>(float *, const float *, int)", "reduce_kernel"]
    assert frame["grid"].tolist() == ["(4096, 1, 1)", "(80, 1, 1)"]
    assert frame["block"].tolist() == ["(256, 1, 1)", "(128, 1, 1)"]
    assert frame["cc"].tolist() == ["8.0", "8.0"]
    assert frame["device_name"].tolist() == ["NVIDIA A100-SXM4-40GB"] * 2
    norm = _norm(fixtures / name)
    k0, k1 = norm.iloc[0], norm.iloc[1]
    assert k0["duration_s"] == pytest.approx(12.345e-6, rel=1e-12)
    assert k0["dram_bytes"] == pytest.approx(1_572_864, rel=1e-12)
    assert k0["l2_bytes"] == pytest.approx(4_194_304, rel=1e-12)
    assert k0["l1_bytes"] == pytest.approx(8_388_608, rel=1e-12)
    assert k0["flop_fp32"] == pytest.approx(203_692.5, rel=1e-12)
    assert k0["flop_fp64"] == 2000.0
    assert k0["sol_sm_pct"] == 45.5
    assert frame.loc[0, "dram__bytes.sum.per_second"] == pytest.approx(1.2741e11, rel=1e-12)
    assert frame.loc[0, "smsp__cycles_elapsed.avg.per_second"] == pytest.approx(1.5e9, rel=1e-12)
    assert k1["duration_s"] == pytest.approx(2e-3, rel=1e-12)
    assert k1["flop_fp32"] == pytest.approx(1.5e6, rel=1e-12)
    assert k1["flop_fp64"] == 0.0
    assert k1["sol_sm_pct"] == 12.25
    # n/a is missing, not zero: the counter recipe has no value, and no tier silently reads 0
    assert math.isnan(cast(float, frame.loc[1, "dram__bytes_write.sum"]))
    # so DRAM falls back to rate x time: 1e9 byte/s x 2e-3 s = 2e6 B (not read 2e6 + write 0)
    assert k1["dram_bytes"] == pytest.approx(2e6, rel=1e-12)
    assert k1["dram_bytes_recipe"] == "rate*time:dram__bytes.sum.per_second"
    assert math.isnan(k1["l1_bytes"])


def test_all_number_styles_and_unit_scales_give_identical_numbers(fixtures: Path) -> None:
    frames = [read_input(str(fixtures / n)).frame for n in RAW_FORMS]
    for other in frames[1:]:
        pd.testing.assert_frame_equal(frames[0], other, check_exact=False, rtol=1e-12)


def test_forced_number_style_overrides_detection(fixtures: Path) -> None:
    table = read_input(str(fixtures / "raw_base_de_DE.csv"), number_style=NumberStyle.DE)
    assert table.frame.loc[0, "dram__bytes_read.sum"] == 1_048_576
    # the en_US file forced to de_DE: its own numbers ("1,048,576", "77.06") contradict that
    # style, so it is refused rather than read 1000x off
    with pytest.raises(BadInputError, match="not written in the de style"):
        read_input(str(fixtures / "raw_base_en_US.csv"), number_style=NumberStyle.DE)


def test_ambiguous_file_is_refused(tmp_path: Path, fixtures: Path) -> None:
    # Only "1.234"-style cells: 1234 (de_DE) or 1.234 (C)? ncu-roof refuses to guess.
    lines = (fixtures / "raw_base.csv").read_text().splitlines()
    header = [*lines[0].split(",")[:12], '"gpu__time_duration.sum"']
    units = [*lines[1].split(",")[:12], '"nsecond"']
    row = lines[2].split('","')[:12]
    text = "\n".join([",".join(header), ",".join(units), '","'.join(row) + '","1.234"']) + "\n"
    path = tmp_path / "ambiguous.csv"
    path.write_text(text)
    with pytest.raises(BadInputError, match="decimal mark"):
        read_input(str(path))


def test_two_runs_with_prof_lines_and_app_output(fixtures: Path) -> None:
    table = read_input(str(fixtures / "raw_two_runs_with_app_output.csv"))
    frame = table.frame
    assert frame["run"].tolist() == ["0", "1"]
    assert frame["id"].tolist() == [0, 0]
    assert frame["process_id"].tolist() == ["4242", "4343"]
    assert frame["name"].tolist() == ["void scale<float, 4>(float *, const float *, int)", "reduce_kernel"]
    norm = normalize(frame[table.metric_columns])
    assert norm["duration_s"].tolist() == pytest.approx([12.345e-6, 2e-3], rel=1e-12)
    assert norm.loc[0, "flop_fp32"] == pytest.approx(203_692.5, rel=1e-12)


def test_details_15_column_metrics_layout(fixtures: Path) -> None:
    # Kernel Time layout, metric rows of 13 fields vs a 15-field header, a rule row with an empty
    # metric name, en_US grouping, ==PROF== lines before the header.
    table = read_input(str(fixtures / "details_metrics_15col.csv"))
    assert table.format is InputFormat.DETAILS_CSV
    frame = table.frame
    assert frame["id"].tolist() == [0, 1]
    gemm = "void gemm<float, (int)128>(const float *, float *, int)"
    assert frame["name"].tolist() == [gemm, "fill_kernel"]
    norm = normalize(frame[table.metric_columns])
    # duration = sm__cycles_elapsed.avg / .per_second = 18,517.5 / 1.5e9 = 12.345 us
    assert norm.loc[0, "duration_s"] == pytest.approx(12.345e-6, rel=1e-12)
    assert cast(str, norm.loc[0, "duration_s_recipe"]).startswith("cycles/clock:sm__cycles_elapsed")
    assert norm.loc[0, "dram_bytes"] == 1_572_864
    assert norm.loc[0, "l2_bytes"] == 4_194_304
    # FP32 counts: fadd 5,000 + fmul 0 + 2 x ffma 100,000 = 205,000 FLOP (FMA counts 2)
    assert norm.loc[0, "flop_fp32"] == 205_000
    assert norm.loc[1, "duration_s"] == pytest.approx(2e-6, rel=1e-12)  # 3,000 / 1.5e9
    assert math.isnan(cast(float, norm.loc[1, "dram_bytes"]))  # n/a
    assert norm.loc[1, "l2_bytes"] == 1000
    assert norm.loc[1, "flop_fp32"] == 0.0


def test_details_20_column_rules_layout(fixtures: Path) -> None:
    # Device/CC/Block/Grid columns, rule columns + Estimated Speedup, ragged 16-field metric rows,
    # rule rows with empty metric names, section labels (Duration, SM Frequency, Memory
    # Throughput as % and as Gbyte/second), auto units (usecond, msecond, Mbyte, Kbyte,
    # cycle/nsecond, cycle/usecond) and en_US grouping ("1,410.00").
    table = read_input(str(fixtures / "details_rules_20col.csv"))
    frame = table.frame
    assert frame["id"].tolist() == [0, 1]
    assert frame["cc"].tolist() == ["8.6", "8.6"]
    assert frame["grid"].tolist() == ["(160, 1, 1)", "(64, 1, 1)"]
    assert frame.loc[0, "gpc__cycles_elapsed.avg.per_second"] == pytest.approx(1.41e9, rel=1e-12)
    assert frame.loc[0, "dram__cycles_elapsed.avg.per_second"] == pytest.approx(1.21e9, rel=1e-12)
    assert frame.loc[0, "gpc__cycles_elapsed.max"] == 17_405
    assert frame.loc[0, "dram__bytes.sum.per_second"] == pytest.approx(127.41e9, rel=1e-12)
    norm = normalize(frame[table.metric_columns])
    k0, k1 = norm.iloc[0], norm.iloc[1]
    assert k0["duration_s"] == pytest.approx(12.35e-6, rel=1e-12)
    # counters beat rate x time: 1.05 Mbyte + 524.29 Kbyte = 1,574,290 B
    assert k0["dram_bytes"] == pytest.approx(1_574_290, rel=1e-12)
    # (2 + 1 + 2 x 4) inst/cycle x 1.41e9 cycle/s x 12.35e-6 s = 191,548.5 FLOP
    assert k0["flop_fp32"] == pytest.approx(191_548.5, rel=1e-12)
    assert k0["sol_sm_pct"] == 45.5
    assert k0["sol_memory_pct"] == 61.2
    assert k1["duration_s"] == pytest.approx(1.5e-3, rel=1e-12)
    # read is n/a: the write alone is DRAM traffic, 96 MB, and its formula says it is a lower bound
    assert k1["dram_bytes"] == pytest.approx(96e6, rel=1e-12)
    assert k1["dram_bytes_recipe"] == "counter:dram__bytes_write.sum (read not collected: a lower bound)"
    assert k1["sol_memory_pct"] == 88.0


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("prof_only.csv", "No kernels were profiled"),
        ("empty.csv", "empty"),
        ("garbage.csv", "not an Nsight Compute"),
        ("raw_truncated.csv", "truncated"),
    ],
)
def test_bad_inputs_are_clear_errors(fixtures: Path, name: str, words: str) -> None:
    with pytest.raises(BadInputError) as info:
        read_input(str(fixtures / name))
    assert words in info.value.message
    assert info.value.hint


def test_missing_path_and_directory(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no such file"):
        read_input(str(tmp_path / "nope.csv"))
    with pytest.raises(BadInputError, match="is a directory"):
        read_input(str(tmp_path))


def _headers_match_the_regexes(paths: list[Path]) -> None:
    for path in sorted(paths):
        raw = path.read_bytes()
        pages, summaries = find_headers(raw)
        assert pages == [m.start() for m in _HEADER.finditer(raw)], path.name
        assert summaries == [m.start() for m in SUMMARY_HEADER.finditer(raw)], path.name


def test_header_search_matches_the_regexes_on_the_corpus(corpus: Path) -> None:
    _headers_match_the_regexes([*corpus.glob("*.csv"), *corpus.glob("*.txt"), *corpus.glob("reexport/*")])


def test_header_search_matches_the_regexes(fixtures: Path) -> None:
    _headers_match_the_regexes([*fixtures.glob("*.csv"), *fixtures.glob("*.txt")])
    assert find_headers(b"noise\nID,Process ID,Kernel Name\n1,2,k\n") == ([6], [])
    # a kernel named like a header is no header; a summary after a page is found too
    raw = (
        b'"ID","Process ID","Kernel Name"\n"0","1","k Process ID"\n'
        b'"Process ID","Process Name","Invocations","Average"\n'
    )
    assert find_headers(raw) == ([0], [raw.index(b'"Process ID","Process N')])


# --- launch shapes and compute capability (`settle_shapes` in ingest/table.py) -------------------


def _raw_page(tmp_path: Path, columns: dict[str, list[str]], name: str = "shape.csv") -> Path:
    """A raw page of launch `k` with the identity columns and `columns` (unitless), duration in ns."""
    header = ["ID", "Process ID", "Kernel Name", "Device", *columns, "gpu__time_duration.sum"]
    rows = len(next(iter(columns.values())))
    units = [""] * (len(header) - 1) + ["nsecond"]
    lines = [",".join(f'"{c}"' for c in header), ",".join(f'"{c}"' for c in units)]
    for i in range(rows):
        cells = [str(i), "1", "k", "0", *(values[i] for values in columns.values()), "1000"]
        lines.append(",".join(f'"{c}"' for c in cells))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _shapes(path: Path) -> list[tuple[object, object, object]]:
    return list(read_input(str(path)).launches.select("grid", "block", "cc").iter_rows())


def test_per_axis_dims_give_the_shape_as_ncu_writes_it(tmp_path: Path) -> None:
    # ncu 2022.3's raw page: no Grid Size / Block Size / CC columns; auto units print the block
    # dims as "256.000000"
    grid = (["16", "39312"], ["16", "1"], ["1", "1"])
    block = (["32.000000", "256"], ["8", "1"], ["1", "1"])
    dims = {
        **{f"launch__grid_dim_{a}": v for a, v in zip("xyz", grid, strict=True)},
        **{f"launch__block_dim_{a}": v for a, v in zip("xyz", block, strict=True)},
        "launch__grid_size": ["256", "39312"],
        "launch__block_size": ["256", "256"],
        "device__attribute_compute_capability_major": ["8", "12"],
        "device__attribute_compute_capability_minor": ["6", "0"],
    }
    assert _shapes(_raw_page(tmp_path, dims)) == [
        ("(16, 16, 1)", "(32, 8, 1)", "8.6"),
        ("(39312, 1, 1)", "(256, 1, 1)", "12.0"),
    ]


def test_totals_alone_are_bare_counts_not_shapes(tmp_path: Path) -> None:
    # 4096 blocks may be (64, 64, 1): a total is written as the count, as a --print-summary
    # kernel line ("Block Size 256, Grid Size 4096") gives it
    page = _raw_page(tmp_path, {"launch__grid_size": ["4096"], "launch__block_size": ["256"]})
    assert _shapes(page) == [("4096", "256", None)]


def test_a_grid_column_that_is_not_the_launchs_total_is_replaced_by_the_totals(tmp_path: Path) -> None:
    # ncu 2024.1 re-exporting a report with totals only writes the thread count as Grid Size;
    # its Block Size beside is a guess of the same kind, so both come from the totals. A column
    # that agrees with its totals is kept as ncu wrote it.
    page = _raw_page(
        tmp_path,
        {
            "Grid Size": ["(1048576, 1, 1)", "(64, 64, 1)"],
            "Block Size": ["(256, 1, 1)", "(16, 16, 1)"],
            "CC": ["7.0", "7.0"],
            "launch__grid_size": ["4096", "4096"],
            "launch__block_size": ["256", "256"],
        },
    )
    assert _shapes(page) == [("4096", "256", "7.0"), ("(64, 64, 1)", "(16, 16, 1)", "7.0")]


def test_a_zero_shape_is_unknown(tmp_path: Path) -> None:
    # "(0, 0, 0)": what ncu writes for a launch whose report holds no launch configuration
    page = _raw_page(
        tmp_path, {"Grid Size": ["(0, 0, 0)", "(8, 1, 1)"], "Block Size": ["(0, 0, 0)", "(32, 1, 1)"]}
    )
    assert _shapes(page) == [(None, None, None), ("(8, 1, 1)", "(32, 1, 1)", None)]


def test_details_page_shapes_are_checked_against_its_launch_statistics(tmp_path: Path) -> None:
    header = ["ID", "Process ID", "Kernel Name", "Block Size", "Grid Size", "Device", "CC"]
    header += ["Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    shapes = {"0": ("(256, 1, 1)", "(1048576, 1, 1)"), "1": ("(256, 1, 1)", "(39,312, 1, 1)")}
    rows = []
    for ident, (block, grid) in shapes.items():
        for section, metric, unit, value in (
            ("GPU Speed Of Light Throughput", "Duration", "usecond", "1.00"),
            ("Launch Statistics", "Block Size", "", "256"),
            ("Launch Statistics", "Grid Size", "", "4,096" if ident == "0" else "39,312"),
        ):
            rows.append([ident, "1", "k", block, grid, "0", "7.0", section, metric, unit, value])
    # (kernel 1's Grid Size column is not a shape once split at its thousands separator: kept)
    path = tmp_path / "details.csv"
    path.write_text(
        "\n".join(",".join(f'"{c}"' for c in r) for r in [header, *rows]) + "\n", encoding="utf-8"
    )
    table = read_input(str(path))
    assert table.format is InputFormat.DETAILS_CSV
    # kernel 1: an en_US digit group inside an axis is no axis of its own, and the text is
    # written as every reader writes it
    assert _shapes(path) == [("4096", "256", "7.0"), ("(39312, 1, 1)", "(256, 1, 1)", "7.0")]
    assert table.launches.get_column("launch__grid_size").to_list() == [4096.0, 39312.0]


def test_shape_texts_are_written_by_one_function() -> None:
    from ncu_roof.ingest.table import _ncu_text, cc_text, shape_text, total_text

    assert shape_text([39312.0, 1.0, 1.0]) == "(39312, 1, 1)"
    assert shape_text(["16", " 16", "1"]) == "(16, 16, 1)"
    assert shape_text([0, 0, 0]) is None and shape_text([2.5, 1, 1]) is None
    assert shape_text([float("nan"), 1, 1]) is None
    assert _ncu_text("(39,312, 1, 1)", 39312.0) == (True, "(39312, 1, 1)")
    assert _ncu_text("(8,8,1)", float("nan")) == (True, "(8, 8, 1)") and _ncu_text("(8,8,1)", 4) == (
        False,
        None,
    )
    assert _ncu_text("4.096", 4096.0) == (True, "4096") and _ncu_text("n/a", 1.0) == (True, "n/a")
    assert _ncu_text("(0, 0, 0)", 4096.0) == (True, None) and _ncu_text(" ", 1.0) == (True, None)
    assert total_text(4096.0) == "4096" and total_text(0) is None and total_text(float("nan")) is None
    assert cc_text(8.0, 6.0) == "8.6" and cc_text(12, 0) == "12.0" and cc_text(8, float("nan")) is None


def test_a_summary_of_more_invocations_than_launches_read_is_refused(tmp_path: Path, fixtures: Path) -> None:
    # each summary row is read as one launch per invocation: tiled<…> of 2,000,000 invocations and
    # warp_reduce of 1 would be 2,000,001 launches, over MAX_SUMMARY_LAUNCHES (1,000,000): refused,
    # not a memory error
    text = (fixtures / "summary_per_kernel.csv").read_text()
    path = tmp_path / "many.csv"
    path.write_text(text.replace('"0","3","', '"0","2000000","'))
    with pytest.raises(BadInputError, match=r"many\.csv: .* 2,000,001 invocations in all"):
        read_input(str(path))
    path.write_text(text.replace('"0","3","', '"0","30","'))
    assert read_input(str(path)).rows == 31  # under the cap: every invocation a launch


def test_a_summary_invocation_count_is_a_number_in_the_files_style(tmp_path: Path, fixtures: Path) -> None:
    # "1,024" in an en-style file (its numbers grouped with ","): 1,024 launches of tiled<…>, plus
    # warp_reduce's one; a count that is no whole number is a damaged row (a column shifted in)
    text = (fixtures / "summary_per_kernel.csv").read_text()
    path = tmp_path / "grouped.csv"
    path.write_text(text.replace('"0","3","', '"0","1,024","').replace('"1.315000"', '"1,315.000000"'))
    assert read_input(str(path)).rows == 1025
    for count in ("2.5", "0", "GPU Speed Of Light Throughput"):
        path.write_text(text.replace('"0","3","', f'"0","{count}","'))
        with pytest.raises(BadInputError, match=rf"line 2: Invocations '{count}' is not a count of launches"):
            read_input(str(path))
    assert read_input(str(path), skip_bad_rows=True).rows == 1  # tiled<…> left out, said
