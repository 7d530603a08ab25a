"""End-to-end `ncu-roof analyze` through the console entry point (`main`), as a user runs it."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import CliResult, run_cli

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> CliResult:
    """`ncu-roof ARGS…` in this process, through `main` (exit codes as the console script's)."""
    return run_cli(*args, cwd=cwd or ROOT, env=env)


def table_rows(text: str) -> list[list[str]]:
    """The cells of each body row of a rich table (lines with `│`)."""
    return [[c.strip() for c in line.split("│")] for line in text.splitlines() if "│" in line]


def test_example_table_lists_every_kernel_with_a_verdict_and_its_basis() -> None:
    done = run("analyze", "--example", "--launches")
    assert done.returncode == 0, done.stderr
    rows = table_rows(done.stdout)
    assert len(rows) == 7
    assert sum(1 for r in rows if "memory-bound (dram) · roofline" in r) == 3
    # the roofline decides wherever it can: the three A10G kernels under one wave per SM that
    # Speed of Light calls latency-bound are compute-bound on the roofline (a note says both)
    assert sum(1 for r in rows if "compute-bound (fp32) · roofline" in r) == 4
    assert not any("latency-bound" in r for r in rows)
    assert "Speed of Light says latency-bound: SM 33–40%, memory 32–46%" in " ".join(done.stdout.split())
    assert "· roofline / · SOL / · none = what the verdict rests on" in done.stdout.replace("\n", " ")
    assert "\x1b[" not in done.stdout  # not a terminal: no colour codes
    assert done.stderr.startswith("read ")


def test_example_table_folds_repeated_launches_and_names_what_to_fix_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "240")  # every column
    done = run("analyze", "--example")
    assert done.returncode == 0, done.stderr
    rows = table_rows(done.stdout)
    assert len(rows) == 5  # three silu launches are one row
    header = next(line for line in done.stdout.splitlines() if "┃" in line)
    names = [c.strip() for c in header.split("┃")]
    silu = next(r for r in rows if r[names.index("kernel")].startswith("silu_kernel_vector"))
    assert silu[names.index("launches")] == "3"
    assert silu[names.index("dev")] == "0"
    # 284.704 + 284.576 + 284.32 µs (gpu__time_duration.sum of the three launches)
    assert silu[names.index("time")] == "854 µs"
    assert silu[names.index("share")] == "100%"  # the only kernel on the H100 (legend: of its device's)
    assert "Share = of its device's time" in done.stdout
    # per device: the A10G's one_blocktiling (432 µs at 19% of its roof: its FMA pipe) could save the most
    assert "device 1: 1.21 ms in 4 launches: 100% compute-bound · roofline" in done.stdout
    saving = "could save 350 µs (29% of its device's time, 17% of all)"
    assert f"fix first: one_blocktiling<…>(…) — {saving}" in done.stdout
    assert "[1] 4 launches: missing counters: shared" in done.stdout  # a --set roofline run


def test_sort_by_headroom_ranks_what_could_save_most_first() -> None:
    done = run("analyze", "--example", "--sort", "headroom", "-F", "json")
    data = json.loads(done.stdout)
    assert data["fix_first"][1]["name"].startswith("void one_blocktiling")
    text = run("analyze", "--example", "--sort", "headroom").stdout
    header = [c.strip() for c in next(line for line in text.splitlines() if "┃" in line).split("┃")]
    saved = [r[header.index("could save")] for r in table_rows(text)]
    assert saved[0] == "350 µs" and saved[1] == "212 µs"


def test_example_json_carries_measured_values_and_recipes() -> None:
    done = run("analyze", "--example", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["schema"] == "ncu-roof/analysis/v1"
    assert [d["name"] for d in data["devices"]] == ["NVIDIA H100 PCIe", "NVIDIA A10G"]
    silu = data["kernels"][0]
    # gpu__time_duration.sum of launch 0 in the H100 PCIe run: 284,704 ns
    assert silu["duration_s"] == pytest.approx(284704e-9)
    # dram__bytes_read.sum + dram__bytes_write.sum of that launch: 268,463,104 + 248,602,624 B
    assert silu["recipe"]["dram_bytes"] == "counter:dram__bytes_read.sum+dram__bytes_write.sum"
    assert silu["bytes"]["dram"] == 268463104 + 248602624
    assert silu["bound"] == "memory" and silu["binding"] == "dram"
    assert silu["flop"]["fp32"] == pytest.approx(1409286144, rel=1e-5)  # rates printed to 2 decimals
    assert 0 < silu["pct_of_roof"] <= 100
    gemm = next(k for k in data["kernels"] if k["name"].startswith("void one_blocktiling"))
    assert gemm["bound"] == "compute" and gemm["compute_precision"] == "fp32"
    for kernel in data["kernels"]:
        assert kernel["recipe"]["duration_s"] == "counter:gpu__time_duration.sum"


def test_output_file_is_written_atomically_and_stdout_stays_empty(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    done = run("analyze", "--example", "--format", "csv", "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    lines = target.read_text().splitlines()
    assert lines[0].startswith("id,name,input,device")
    assert len(lines) == 1 + 7
    assert list(tmp_path.iterdir()) == [target]


@pytest.mark.parametrize(
    ("content", "code", "words"),
    [
        (b"", 3, "empty"),
        (b"garbage,\x00\x01 not csv\n", 3, "not an Nsight Compute"),
        (
            b"==PROF== Connected to process 1 (/bin/app)\n==WARNING== No kernels were profiled.\n",
            3,
            "No kernels were profiled",
        ),
        (b"NVR\x00\x02\x00\x00\x00truncated", 3, "no profiled kernel"),
    ],
)
def test_bad_input_is_one_error_line_and_a_hint(
    tmp_path: Path, content: bytes, code: int, words: str
) -> None:
    path = tmp_path / "bad.ncu-rep"
    path.write_bytes(content)
    target = tmp_path / "never.json"
    done = run("analyze", str(path), "--format", "json", "-o", str(target))
    assert done.returncode == code
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and words in lines[0]
    assert lines[1].startswith("hint: ")
    assert "Traceback" not in done.stderr
    assert not target.exists()


def test_usage_errors_exit_2() -> None:
    assert run("analyze").returncode == 2
    done = run("analyze", "--example", "--gpu", "no-such-gpu")
    assert done.returncode == 2 and "unknown GPU" in done.stderr
    assert run("analyze", "--example", "--format", "yaml").returncode == 2


def test_gpu_override_uses_builtin_roofs() -> None:
    done = run("analyze", "--example", "--gpu", "h100-pcie", "--format", "json")
    data = json.loads(done.stdout)
    assert {d["roof_source"] for d in data["devices"]} == {"builtin:h100-pcie"}
    # at the measured DRAM clock (1.593 GHz) x 1280 B/clk (5120-bit bus), not the 2.0 TB/s boost figure
    device = data["devices"][0]
    assert device["roofs"]["bandwidth_byte_per_s"]["dram"] == pytest.approx(2.0386e12, rel=1e-4)
    assert "builtin:h100-pcie" in device["roof_sources"]["dram"]
    assert "at measured 1.593 GHz" in device["roof_sources"]["dram"]


def test_roofs_file(tmp_path: Path) -> None:
    roofs = tmp_path / "platform.toml"
    roofs.write_text('name = "lab"\n[peak]\nfp32 = "100GFLOP/s"\n[bandwidth]\ndram = "20GB/s"\n')
    done = run("analyze", "--example", "--roofs", str(roofs), "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["devices"][0]["roof_source"] == "user"
    silu = data["kernels"][0]
    # L2 and L1 moved bytes but the file gives them no roof: they may bind, so no verdict
    # l2 has traffic and no roof: no roofline verdict; Speed of Light still gives one
    assert silu["binding"] is None and silu["verdict_basis"] == "sol" and silu["bound"] == "memory"
    assert any(n.startswith("no roofline verdict: l2 has traffic") for n in silu["notes"])
    with roofs.open("a") as more:
        more.write('l2 = "1PB/s"\nl1 = "1PB/s"\n')
    done = run("analyze", "--example", "--roofs", str(roofs), "--format", "json")
    silu = json.loads(done.stdout)["kernels"][0]
    # 20 GB/s against ~5e8 DRAM bytes: the dram cap is far below the measured rate
    assert silu["binding"] == "dram" and silu["above_roof"] is True


def test_hostile_kernel_names_reach_the_terminal_inert(tmp_path: Path) -> None:
    hostile = "[bold red]pwn[/] \x1b[31mred\x1b[0m k<T*, a|b>\nnext"
    header = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Device","CC","gpu__time_duration.sum"'
    )
    rows = [header, '"","","","","","","","nsecond"', f'"0","1","app","h","{hostile}","0","8.0","1000"']
    path = tmp_path / "hostile.csv"
    path.write_text("\n".join(rows) + "\n")
    done = run("analyze", str(path))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert "[bold red]pwn[/]" in done.stdout
    table = run("analyze", str(path), "--format", "json")
    assert json.loads(table.stdout)["kernels"][0]["name"] == hostile


def test_expectations_confirm_contradict_and_gate(tmp_path: Path) -> None:
    expectations = tmp_path / "expect.toml"
    expectations.write_text(
        '[[expect]]\nkernel = "silu_kernel_vector"\nbound = "memory"\nbinding = "dram"\n\n'
        '[[expect]]\nkernel = "^void warptiling"\nbound = "memory"\n\n'
        '[[expect]]\nkernel = "no_such_kernel"\nbound = "memory"\n'
    )
    done = run("analyze", "--example", "--format", "json", "--expect", str(expectations))
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # the data on stdout stays clean
    # three silu launches confirmed; warptiling is compute-bound on the roofline, not memory-bound
    assert "3 confirmed, 1 contradicted, 0 unknown, 1 unmatched" in done.stderr
    assert "/no_such_kernel/" in done.stderr
    gated = run("analyze", "--example", "--expect", str(expectations), "--fail-on-mismatch")
    assert gated.returncode == 1
    assert "error:" in gated.stderr


def test_output_to_a_pipe_or_device_writes_through(tmp_path: Path) -> None:
    import os
    import stat
    import threading

    from ncu_roof.render.output import write_output

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_output("data\n", str(fifo))
    reader.join(timeout=10)
    assert received == [b"data\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # not replaced by a regular file


CORPUS = ROOT.parent / "shared" / "ncu-corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/ncu-corpus absent")


@needs_corpus
def test_truncated_report_is_refused(tmp_path: Path) -> None:
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes((CORPUS / "a10_rep_2023.2.0_105-kernels-llm.ncu-rep").read_bytes()[:200_000])
    done = run("analyze", str(cut))
    assert done.returncode == 3
    assert "truncated" in done.stderr and done.stdout == ""


@needs_corpus
def test_each_launch_is_judged_at_its_own_clocks() -> None:
    # A40 report: three ~10 µs launches ran at lower DRAM clocks than the rest. Against its own
    # launch's DRAM roof (bandwidth = 32 B x the DRAM transaction peak), the achieved DRAM rate is
    # exactly ncu's gpu__dram_throughput (SOL DRAM).
    done = run("analyze", str(CORPUS / "a40_rep_2022.4.0_indexspaces.ncu-rep"), "--format", "json")
    kernels = {k["id"]: k for k in json.loads(done.stdout)["kernels"]}
    for kernel in kernels.values():
        roof = 32 * kernel["instruction_roofline"]["transaction_peak_per_s"]["dram"]
        assert 100 * kernel["achieved_byte_per_s"]["dram"] / roof == pytest.approx(kernel["sol_pct"]["dram"])
    # every launch counts L2 as Nsight 2022 draws it (lts__t_bytes, read as lts__t_sectors x 32),
    # its roof that counter's own from the report (rate / lts__t_sectors.avg's pct of peak): DRAM
    # binds at each launch's clocks
    for kernel in kernels.values():
        assert kernel["binding"] == "dram" and not kernel["above_roof"]
        assert kernel["pct_of_roof"] == pytest.approx(kernel["sol_pct"]["dram"], rel=5e-3)
        assert kernel["traffic"]["l2"]["recipe"] == "counter:lts__t_sectors.sum*32"
        assert (
            kernel["traffic"]["l2"]["roof"]
            == "report:lts__t_sectors.sum*32 rate / pct_of_peak_sustained_elapsed"
        )
    assert kernels[0]["bytes"]["l2"] == 32 * 1263360  # lts__t_sectors.sum of launch 0


def test_a_launch_without_its_counters_roof_never_gets_another_counters(corpus: Path) -> None:
    # --traffic counted on the A40 report: the launches count L2 as lts__t_sectors x 32; only
    # that counter's peak (its pct of peak in the report) judges them, never another's
    done = run(
        "analyze",
        str(corpus / "a40_rep_2022.4.0_indexspaces.ncu-rep"),
        "--traffic",
        "counted",
        "--format",
        "json",
    )
    document = json.loads(done.stdout)
    for kernel in document["kernels"]:
        if kernel["traffic"]["l2"]["recipe"] == "counter:lts__t_sectors.sum*32":
            assert kernel["traffic"]["l2"]["roof"].startswith("report:lts__t_sectors.sum*32")
        else:
            assert kernel["traffic"]["l2"]["roof"].startswith("report:l1tex__m_xbar2l1tex_read_bytes")


def test_a_failing_option_leaves_no_output(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    done = run(
        "analyze", "--example", "-F", "markdown", "-o", str(target), "--plot", str(tmp_path / "no/x.svg")
    )
    assert done.returncode == 1 and "cannot write" in done.stderr
    assert not target.exists() and done.stdout == ""
    bad_type = run("analyze", "--example", "--plot", str(tmp_path / "x.gif"))
    assert bad_type.returncode == 2 and bad_type.stdout == ""


def test_files_get_the_mode_of_a_new_file(tmp_path: Path) -> None:
    import os

    target = tmp_path / "out.json"
    old = os.umask(0o022)
    try:
        assert run("analyze", "--example", "-F", "json", "-o", str(target)).returncode == 0
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o644


def test_expectations_travel_in_the_json(tmp_path: Path) -> None:
    expectations = tmp_path / "expect.toml"
    expectations.write_text('[[expect]]\nkernel = "silu"\nbound = "memory"\nbinding = "dram"\n')
    done = run("analyze", "--example", "-F", "json", "--expect", str(expectations))
    block = json.loads(done.stdout)["expectations"]
    assert block["counts"]["confirmed"] == 3
    assert {c["status"] for c in block["checks"]} == {"confirmed"}


def test_a_capture_whose_every_launch_failed_is_bad_input(tmp_path: Path) -> None:
    # fixtures/raw_every_launch_failed.csv: raw_base.csv with every counter n/a (ncu measured nothing)
    path = ROOT / "fixtures" / "raw_every_launch_failed.csv"
    out = tmp_path / "report.md"
    done = run("analyze", str(path), "-o", str(out))
    assert done.returncode == 3 and done.stdout == "" and not out.exists()
    assert done.stderr.splitlines()[-2:] == [
        f"error: {path}: collection failed for every launch (2 launches): ncu measured nothing",
        "hint: profile again; ncu's own output says why (a crash, a GPU reset, a replay that failed)",
    ]
    mixed = run("analyze", str(path), str(ROOT / "fixtures" / "raw_base.csv"), "-F", "json")
    assert mixed.returncode == 3  # the failed capture is named even beside a good one
    assert run("analyze", str(ROOT / "fixtures" / "raw_base.csv"), "-F", "json").returncode == 0


def test_a_page_without_metric_columns_is_a_failed_collection(tmp_path: Path) -> None:
    """Identity columns only (raw page), or only metrics no recipe knows (details page): the
    launches are read and none was measured (an internal error once the table was Polars)."""
    with (ROOT / "fixtures" / "raw_base.csv").open(encoding="utf-8", newline="") as page:
        rows = [row[:12] for row in csv.reader(page)]  # ID … device__attribute_display_name
    with (tmp_path / "bare.csv").open("w", encoding="utf-8", newline="") as bare:
        csv.writer(bare, quoting=csv.QUOTE_ALL).writerows(rows)
    details = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Section Name",'
        '"Metric Name","Metric Unit","Metric Value"\n'
        '"0","5150","app","127.0.0.1","gemm","1","7","Command line profiler metrics","foo__unknown.sum",'
        '"byte","1,572,864"\n'
    )
    (tmp_path / "unknown.csv").write_text(details, encoding="utf-8")
    for name, launches in (("bare.csv", "2 launches"), ("unknown.csv", "1 launch")):
        done = run("analyze", str(tmp_path / name), "-F", "json")
        assert done.returncode == 3, done.stderr
        assert f"collection failed for every launch ({launches}): ncu measured nothing" in done.stderr


def test_a_page_without_the_metrics_read_is_no_failed_collection(tmp_path: Path) -> None:
    """A roofline chart section page alone (as the corpus' RTX 5090 one): its clocks were measured,
    none of the duration, FLOPs, bytes or SOL: said so (exit 3), with the ncu run that collects them."""
    from ncu_roof.base.metrics import collect_command

    header = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Section Name",'
    row = '"0","5150","app","127.0.0.1","gemv","1","7","GPU Speed Of Light Roofline Chart",'
    path = tmp_path / "chart.csv"
    path.write_text(
        f'{header}"Metric Name","Metric Unit","Metric Value"\n'
        f'{row}"SM Frequency","Ghz","2.15"\n{row}"DRAM Frequency","Ghz","13.72"\n',
        encoding="utf-8",
    )
    done = run("analyze", str(path), "-F", "json")
    parts = ["duration", "flop", "dram", "l2", "l1", "shared", "sol"]
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.splitlines()[-2:] == [
        f"error: {path}: holds none of the metrics ncu-roof reads (no {', '.join(parts)} counters)",
        f"hint: a run that collects them: {collect_command(parts)}",
    ]
    assert "gpu__time_duration.sum" in collect_command(parts)


@pytest.mark.corpus
def test_the_corpus_roofline_chart_page_is_no_failed_collection_but_a_real_one_is(corpus: Path) -> None:
    done = run("analyze", str(corpus / "rtx5090_details-bodyitem_roofline-chart-section.csv"))
    error, hint = done.stderr.splitlines()[-2:]
    assert done.returncode == 3 and "collection failed" not in done.stderr
    assert error.endswith(
        "holds none of the metrics ncu-roof reads (no duration, flop, dram, l2, l1, shared, sol counters)"
    )
    assert (
        hint.startswith("hint: a run that collects them: ncu --metrics ")
        and "gpu__time_duration.sum," in hint
    )
    failed = run("analyze", str(corpus / "a100pcie_rep_2022.4.0_all-nan-failed.ncu-rep"))
    assert failed.returncode == 3 and failed.stderr.splitlines()[-2].endswith(
        "collection failed for every launch (1 launch): ncu measured nothing"
    )
