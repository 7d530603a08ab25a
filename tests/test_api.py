"""The Python API (docs/api.md): its examples run, and it gives what the CLI gives."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import ncu_roof
from ncu_roof.errors import BadInputError, NcuRoofWarning, UsageError

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"
ROOFLINE_SET = "reexport/a10g_rep_2023.1.1_roofline-set.ncu2024.1-raw-base.csv"


def test_docs_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ```python block of docs/api.md, in order, in one namespace (its asserts included)."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= 6
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOCS), "exec"), namespace)
    assert (tmp_path / "base.parquet").is_file()


def test_import_is_light() -> None:
    heavy = "{'pandas', 'numpy', 'pyarrow', 'matplotlib'}"
    code = f"import sys, ncu_roof; print(sorted({heavy} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_to_pandas_matches_the_json(corpus: Path) -> None:
    """The table is the JSON flattened: same values, units in the names, null where null."""
    a = ncu_roof.analyze(corpus / ROOFLINE_SET)
    df = a.to_pandas()
    doc = json.loads(a.to_json())
    assert list(df["name"]) == [k["name"] for k in doc["kernels"]]
    first = df.iloc[0]
    # --set roofline has DRAM traffic only as a rate: bytes = dram__bytes.sum.per_second x duration
    assert first["duration_s"] == pytest.approx(431_648e-9, rel=1e-12)
    assert first["dram_bytes"] == pytest.approx(47_911_631_699.90 * 431_648e-9, rel=1e-9)
    for kernel, (_, row) in zip(doc["kernels"], df.iterrows(), strict=True):
        assert row["bound"] == kernel["bound"] and row["binding"] == kernel["binding"]
        assert row["flop_total"] == pytest.approx(kernel["flop"]["total"])
        assert row["pct_of_roof"] == pytest.approx(kernel["pct_of_roof"])
        assert list(row["notes"]) == kernel["notes"]
    # ncu 2023.1: L2 traffic is what Nsight 2023.x draws, l1tex__m_xbar2l1tex_read_bytes
    assert df["l2_bytes"].iloc[0] == pytest.approx(1.294161e8, rel=1e-6)
    assert df["shared_bytes"].isna().all()  # no shared-memory counter in this run: null, never 0
    assert set(df["input_path"]) == {str(corpus / ROOFLINE_SET)}
    assert set(df["device_name"]) == {"NVIDIA A10G"}


def test_cli_json_is_the_api_json(corpus: Path) -> None:
    path = str(corpus / ROOFLINE_SET)
    from conftest import document_text

    from ncu_roof import pipeline
    from ncu_roof.render.formats import OutputFormat, RenderOptions, render

    cli = document_text(render(pipeline.run([path]), OutputFormat.JSON, RenderOptions()))
    assert cli == ncu_roof.analyze(path).to_json()


def test_predict_and_diff_reach_the_api() -> None:
    p = ncu_roof.predict(flops="2GFLOP", bytes={"dram": "1GB"}, gpu="a100-sxm4")
    assert p.attainable_flop_per_s == pytest.approx(2.0 * 2039e9)  # intensity 2 x datasheet DRAM
    with pytest.raises(UsageError):
        ncu_roof.predict(flops=1e9, bytes=1e8)  # no platform
    a = ncu_roof.analyze(ncu_roof.example_path())
    d = ncu_roof.diff(a, ncu_roof.example_path())
    assert [k.status.value for k in d.kernels] == ["unchanged"] * 7
    from ncu_roof.render.predictout import render_json

    assert render_json(p).startswith("{")


def test_errors_are_the_cli_errors(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no such file"):
        ncu_roof.analyze(tmp_path / "missing.ncu-rep")
    with pytest.raises(UsageError):
        ncu_roof.analyze()
    with pytest.raises(UsageError, match="number_locale"):
        ncu_roof.analyze(ncu_roof.example_path(), number_locale="fr")


def test_predict_on_a_tensor_data_path() -> None:
    # H100 SXM5 datasheet: FP8 1979 TFLOP/s dense; 1e15 FLOP with 1 MB of DRAM traffic is compute-bound
    p = ncu_roof.predict(flops=1e15, bytes=1e6, gpu="h100-sxm5", precision="tensor:fp8")
    assert p.binding == "compute" and p.attainable_flop_per_s == pytest.approx(1979e12, rel=1e-3)


def test_the_notebook_views_escape_names_and_stay_short() -> None:
    """Hostile kernel and device names are text in the HTML view; the repr stays a few lines."""
    from test_markdown import synthetic

    from ncu_roof.api import Analysis

    names = ["<script>alert(1)</script> & k", "b", "c"]
    a = Analysis.of(synthetic(names, device_name="<img src=x onerror=alert(1)>"))
    html = a._repr_html_()
    assert "<script>" not in html and "<img" not in html
    assert "<code>&lt;…&gt;alert(1)&lt;…&gt; &amp; k</code>" in html  # elided as every table elides
    assert html.startswith("<style>.ncu-roof ") and '<div class="ncu-roof">' in html
    assert html.count("<tr>") == 1 + 3
    lines = repr(a).splitlines()
    assert lines[0] == "<ncu_roof.Analysis: 3 launches of 3 kernels, 1.83 ms>" and len(lines) <= 5


def test_plot_draws_every_device_as_the_docs_say() -> None:
    a = ncu_roof.analyze(ncu_roof.example_path())
    assert len(a.plot().axes) == len(a.devices) == 2


def test_fix_first_rank_names_each_devices_fix_first() -> None:
    """The smallest `fix_first_rank` on each device is the kernel the headline says to fix first
    there; rank 1 is the one over all devices; every launch of a group shares its group's rank."""
    from ncu_roof.render.summary import summarize

    a = ncu_roof.analyze(ncu_roof.example_path())
    df = a.to_pandas()
    for view in summarize(a).devices:
        assert view.fix_first is not None
        mine = df[df["device"] == view.device.index]
        first = mine.sort_values("fix_first_rank").iloc[0]
        assert (first["name"], first["grid"]) == (view.fix_first.group.name, view.fix_first.group.lead.grid)
    assert df.groupby("group_id")["fix_first_rank"].nunique().eq(1).all()
    assert sorted(df.drop_duplicates("group_id")["fix_first_rank"]) == [1, 2, 3, 4, 5]


def test_the_notebook_views_give_each_verdicts_basis_as_the_headline_does() -> None:
    a = ncu_roof.analyze(ncu_roof.example_path())
    lines = repr(a).splitlines()
    assert lines[1] == "  device 0 NVIDIA H100 PCIe: 854 µs, 100% memory-bound (dram 100%) · roofline"
    assert lines[2] == "  device 1 NVIDIA A10G: 1.21 ms, 100% compute-bound · roofline"
    assert "100% memory-bound (dram 100%) · roofline</p>" in a._repr_html_()


def cli_lines(*args: str) -> tuple[int, list[str]]:
    """`ncu-roof analyze ARGS`: its exit code, and its stderr lines but progress (`read …`)."""
    from conftest import run_cli

    done = run_cli("analyze", *args, "--format", "json")
    return done.returncode, [line for line in done.stderr.splitlines() if not line.startswith("read ")]


def test_each_warning_the_cli_prints_is_issued_and_kept(fixtures: Path, tmp_path: Path) -> None:
    """Invalid UTF-8 replaced and a --gpu of another GPU than the report's: the CLI's warnings, in
    its words, each an `NcuRoofWarning` and kept in `warnings`; a clean run says nothing."""
    damaged = tmp_path / "damaged.csv"
    damaged.write_bytes((fixtures / "raw_base.csv").read_bytes().replace(b'"app"', b'"app\xff"', 1))
    with pytest.warns(NcuRoofWarning) as caught:
        a = ncu_roof.analyze(damaged, gpu="h100-pcie")
    assert a.warnings == (
        f"warning: {damaged}: 1 invalid UTF-8 sequence replaced by U+FFFD (first on line 3)",
        "warning: --gpu h100-pcie (H100 PCIe) is not the report's device 'NVIDIA A100-SXM4-40GB'; "
        "its built-in figures are used at the measured clocks",
    )
    assert [str(w.message) for w in caught] == list(a.warnings)
    assert {w.filename for w in caught} == {__file__}  # at the caller's line
    code, lines = cli_lines(str(damaged), "--gpu", "h100-pcie")
    assert code == 0 and lines[:2] == list(a.warnings)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ncu_roof.analyze(fixtures / "raw_base.csv").warnings == ()


def test_a_capture_that_measured_nothing_is_the_clis_error(fixtures: Path) -> None:
    """Every launch failed: the CLI's `BadInputError` (exit 3), in its words; with `skip_bad_rows`
    beside an input that measured, left out with the CLI's warning; alone, refused all the same."""
    failed, measured = str(fixtures / "raw_every_launch_failed.csv"), str(fixtures / "raw_base.csv")
    words = f"{failed}: collection failed for every launch (2 launches): ncu measured nothing"
    with pytest.raises(BadInputError) as refused:
        ncu_roof.analyze(failed, measured)
    code, lines = cli_lines(failed, measured)
    assert refused.value.message == words and (code, lines[0]) == (3, f"error: {words}")
    with pytest.warns(NcuRoofWarning, match="left out"):
        a = ncu_roof.analyze(failed, measured, skip_bad_rows=True)
    assert [i.path for i in a.inputs] == [measured] and len(a.kernels) == 2
    assert a.warnings == (f"warning: {words}; left out (--skip-bad-rows)",)
    code, lines = cli_lines(failed, measured, "--skip-bad-rows")
    assert code == 0 and lines[:1] == list(a.warnings)
    with pytest.raises(BadInputError, match="collection failed for every launch"):
        ncu_roof.analyze(failed, skip_bad_rows=True)
    with pytest.raises(BadInputError, match="collection failed for every launch"):
        ncu_roof.diff(measured, failed)
