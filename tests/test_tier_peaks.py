"""The built-in peak of every tier counter (`ncu_roof.gpus.arch.counter_peaks`) against every corpus report
that carries it (within 1 %), and the roofs it gives where a report has none."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, ROOT, load_script

from ncu_roof.gpus.arch import WRITEBACKS, counter_peak, counter_peaks, l2_slices
from ncu_roof.gpus.lookup import builtin_gpus, gpu_by_key
from ncu_roof.gpus.specs import hardware_from_attributes


@pytest.mark.corpus
def test_every_figure_agrees_with_the_reports_that_carry_it(corpus: Path) -> None:
    pytest.importorskip("ncu_report")
    findings = load_script("mine_peaks").mine(corpus)
    assert len(findings) > 50
    confirmed: set[tuple[str, str]] = set()
    for f in findings:
        found = counter_peak(f.cc, f.counter)
        assert found is not None, (f.report, f.counter)
        peak, _ = found
        expected = peak.per_clock
        if peak.older_ncu is not None and f.ncu_version.startswith(peak.older_ncu[0].removeprefix("ncu ")):
            expected = peak.older_ncu[1]  # the figure that version reported, kept beside the table's
        # "reads" estimates the crossbar's peak from the read sectors alone (writes' acknowledgements
        # and atomics' returns take a few of its cycles too): 3 %; a stored or counted peak: 1 %
        tolerance = 0.03 if f.how == "reads" else 0.01
        assert f.per_clock == pytest.approx(expected, rel=tolerance), (f.report, f.counter, f.how)
        confirmed.add((f.cc, _group(f.counter)))
    # a figure said to come from the corpus reports is confirmed by one (the others say where they
    # are from; those of the H200 fixture are checked by the test below)
    for cc, figures in counter_peaks().items():
        for counter, peak in figures.items():
            if peak.verified and peak.source.startswith("ncu reports") and "fixtures/" not in peak.source:
                assert (cc, _group(counter)) in confirmed, (cc, counter)


def _group(counter: str) -> str:
    """The writeback scopes share one figure: any of them confirms it."""
    return "writeback" if counter in WRITEBACKS else counter


def test_unverified_figures_say_so_and_unlisted_revisions_are_unverified() -> None:
    volta_xbar = counter_peak("7.0", "lts__lts2xbar_cycles_active.sum")
    assert volta_xbar is not None and not volta_xbar[0].verified
    assert volta_xbar[0].describe().endswith("(unverified)")
    hopper = counter_peak("9.0", "lts__t_bytes.sum")
    assert hopper is not None and hopper[0].per_clock == 3 and hopper[1] == 32  # sectors x 32 B
    later = counter_peak("10.3", "lts__t_sectors.sum")
    assert later is not None and not later[0].verified
    assert counter_peak("6.1", "lts__t_sectors.sum") is None
    # a figure older ncu reported otherwise is one a report confirmed (its words end with that)
    assert all(p.verified for f in counter_peaks().values() for p in f.values() if p.older_ncu)


def test_l2_slices_follow_the_memory_bus() -> None:
    # the .sum / .avg of lts__ counters in the corpus: T4 32, RTX 2060 Max-Q 24, RTX 5060 Ti 16,
    # A100 and H100 PCIe 80
    assert [l2_slices(b) for b in (256, 192, 128, 5120)] == [32, 24, 16, 80]


def test_the_devices_own_l2_slice_count_wins_over_its_bus() -> None:
    # GTX 1660 SUPER (TU116): a 192-bit bus, but device__attribute_l2s_count 12, not TU106's 24
    own, by_bus = (hardware_from_attributes(22, 1.83e9, 7e9, 192, "7.5", *n) for n in ((12,), ()))
    assert own is not None and by_bus is not None
    found, guessed = (h.counter_per_clock("lts__t_sectors.sum*32") for h in (own, by_bus))
    assert found is not None and found[:2] == (12 * 32, "l2")
    assert "x 12 L2 slices (device__attribute_l2s_count)" in found[2]
    assert guessed is not None and guessed[:2] == (24 * 32, "l2") and "(memory bus / 8 GDDR" in guessed[2]


def test_every_builtin_gpu_has_a_roof_for_every_tier_counter() -> None:
    counters = ["dram__bytes.sum", "lts__t_bytes.sum", "lts__t_sectors.sum*32", "l1tex__t_bytes.sum"]
    counters += ["lts__lts2xbar_cycles_active.sum*32", "l1tex__m_xbar2l1tex_read_bytes.sum"]
    counters += [f"l1tex__lsu_writeback_active{s}.sum*128" for s in ("", "_mem_lg", "_mem_lgds")]
    counters += ["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum*128", "sm__sass_data_bytes_mem_shared.sum"]
    for gpu in builtin_gpus().values():
        hardware = gpu.hardware()
        for counter in counters:
            assert hardware.counter_per_clock(counter) is not None, (gpu.key, counter)
    # and any GPU the device attributes describe (here a made-up CC 8.6 part)
    attributes = hardware_from_attributes(30, 1.5e9, 7e9, 192, "8.6")
    assert attributes is not None
    for counter in counters:
        assert attributes.counter_per_clock(counter) is not None, counter


def test_hand_computed_builtin_peaks() -> None:
    a100 = gpu_by_key("a100-sxm4-40gb").hardware()
    # lts__t_bytes on A100: 80 slices (5120-bit HBM / 64) x 3 sectors x 32 B per L2 clock
    assert a100.counter_per_clock("lts__t_bytes.sum")[:2] == (80 * 3 * 32, "l2")  # type: ignore[index]
    # Nsight's L2 measure: 80 slices x 2 xbar cycles x 32 B
    assert a100.counter_per_clock("lts__lts2xbar_cycles_active.sum*32")[:2] == (5120, "l2")  # type: ignore[index]
    # L1 tag stage: 108 SMs x 4 sectors x 32 B per L1 clock (unverified)
    l1 = a100.counter_per_clock("l1tex__t_bytes.sum")
    assert l1 is not None and l1[:2] == (108 * 128, "l1") and "(unverified)" in l1[2]
    # DRAM: bus / 4 bytes per DRAM clock
    assert a100.counter_per_clock("dram__bytes.sum")[:2] == (1280, "dram")  # type: ignore[index]
    # V100: 64 slices (4096-bit / 64) x 1 sector x 32 B
    v100 = gpu_by_key("v100-pcie").hardware()
    assert v100.counter_per_clock("lts__t_bytes.sum")[:2] == (2048, "l2")  # type: ignore[index]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/ncu-corpus absent")
def test_a_report_without_its_l2_peak_gets_the_table_s(corpus: Path) -> None:
    from conftest import analyzed

    # the NERSC-method V100 CSV counts L2 as lts__t_bytes and holds no peak of it: its built-in
    # one, 64 slices (4096-bit HBM2 / 64) x 1 sector x 32 B x the launch's clock (no L2 clock in
    # the file: the SM clock it ran at)
    analysis = analyzed(corpus / "v100_details_nersc-roofline_cutlass-gemm_app-stdout.csv")
    for kernel in analysis.kernels:
        assert kernel.traffic["l2"]["recipe"] == "counter:lts__t_bytes.sum"
        roof = kernel.traffic["l2"]["roof"]
        assert roof.startswith("builtin:v100-pcie, inferred from CC 7.0; also matches v100-sxm2 (")
        assert "lts__t_bytes.sum: 1/L2 slice/clk" in roof and "x 64 L2 slices" in roof
        assert "at the SM clock" in roof
        assert kernel.binding is not None


def _h200_peaks() -> dict[str, float]:
    """`<metric>` → value of the first launch of fixtures/h200/h200_peaks_raw.csv (ncu 2025.3.1 on
    an H200 SXM, `--page raw`; the program's output and ==PROF== lines precede the CSV)."""
    import csv

    lines = (ROOT / "fixtures" / "h200" / "h200_peaks_raw.csv").read_text(encoding="utf-8").splitlines()
    rows = list(csv.reader(lines[next(i for i, line in enumerate(lines) if line.startswith('"ID"')) :]))
    header, first = rows[0], rows[2]  # rows[1]: the units
    out = {}
    for name, cell in zip(header, first, strict=True):
        try:
            out[name] = float(cell.replace(",", ""))
        except ValueError:
            continue
    return out


def test_the_h200_s_own_peaks_are_the_table_s() -> None:
    # the per-unit .avg.peak_sustained of every tier counter, and the .sum over 94 L2 slices
    # (6016-bit HBM3e / 64) or 132 SMs, as the H200's ncu 2025.3.1 reports them
    peaks = _h200_peaks()
    assert peaks["device__attribute_global_memory_bus_width"] == 6016 and l2_slices(6016) == 94
    hardware = gpu_by_key("h200").hardware()
    for counter in (
        "lts__t_sectors.sum",
        "lts__t_bytes.sum",
        "lts__lts2xbar_cycles_active.sum",
        "l1tex__t_sectors.sum",
        "l1tex__t_bytes.sum",
        "l1tex__m_xbar2l1tex_read_bytes.sum",
        "l1tex__lsu_writeback_active.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    ):
        found = counter_peak("9.0", counter)
        assert found is not None and found[0].verified, counter
        peak, per_unit = found
        base = counter.removesuffix(".sum")
        assert peak.per_clock * per_unit == peaks[f"{base}.avg.peak_sustained"], counter
        total = hardware.counter_per_clock(counter)
        assert total is not None and total[0] == peaks[f"{counter}.peak_sustained"], counter
    dram = hardware.counter_per_clock("dram__bytes.sum")
    assert dram is not None and dram[0] == peaks["dram__bytes.sum.peak_sustained"] == 1504  # 6016 / 4


class _NoLookups(dict[str, int]):
    def __contains__(self, key: object) -> bool:
        raise AssertionError(f"looked up {key!r}: one revision at a time")


def test_an_unlisted_revision_takes_the_nearest_lower_listed_one_without_counting_down() -> None:
    """A damaged file's minor revision (1e12, as a float attribute prints) took a loop of 10^12
    lookups (the analysis hung); the listed revisions are scanned instead."""
    from ncu_roof.gpus.arch import nearest_listed

    listed = _NoLookups({"8.0": 1, "8.6": 1, "9.0": 1, "10.0": 1})
    assert nearest_listed("8.1000000000000", listed) == "8.6"
    assert nearest_listed("8.5", listed) == "8.0"
    assert nearest_listed("10.3", listed) == "10.0"
    assert nearest_listed("9.0", listed) is None  # listed: not an unlisted one's figures
    assert nearest_listed("7.5", listed) is None
    assert nearest_listed("x.1", listed) is None
