"""A file that names no GPU but holds its compute capability and SM count gets the matching
built-in product, said so, with the others that match; `--gpu` still overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import analyzed, run_cli

from ncu_roof.base.vocabulary import Bound, RoofChoice, VerdictBasis
from ncu_roof.gpus.lookup import infer_gpu


def test_cc_and_sm_count_name_the_product_and_its_alternatives() -> None:
    a100 = infer_gpu("8.0", 108)
    assert a100 is not None and a100.gpu is not None and a100.gpu.key == "a100-pcie"
    assert a100.describe() == (
        "inferred from CC 8.0, 108 SMs; also matches a100-pcie-80gb, a100-sxm4-40gb, a100-sxm4"
    )
    a40 = infer_gpu("8.6", 84)
    assert a40 is not None and a40.gpu is not None and a40.gpu.key == "a40"
    assert a40.describe() == "inferred from CC 8.6, 84 SMs"
    a10g = infer_gpu("8.6", 80, 384)
    assert a10g is not None and a10g.gpu is not None and a10g.gpu.key == "a10g"
    # 132 SMs on CC 9.0: five products, one compute roof, three memory buses; the first is taken,
    # the others named, and a bus width (a raw page's device attribute) tells them apart
    hopper = infer_gpu("9.0", 132)
    assert hopper is not None and hopper.gpu is not None and hopper.gpu.key == "gh200"
    assert hopper.describe().endswith("also matches gh200-144gb, h200, h100-sxm5, h800")
    h200 = infer_gpu("9.0", 132, 6016)
    assert h200 is not None and h200.gpu is not None and h200.gpu.key == "h200" and len(h200.candidates) == 1


def test_a_cc_alone_names_a_product_only_when_all_of_its_products_share_sms_and_bus() -> None:
    v100 = infer_gpu("7.0", None)  # V100 PCIe and SXM2: 80 SMs, 4096-bit HBM2 both
    assert v100 is not None and v100.gpu is not None and v100.gpu.key == "v100-pcie"
    ga10x = infer_gpu("8.6", None)  # A10 72, A10G 80, A40 84, RTX 3070 46, RTX 3090 82 SMs
    assert ga10x is not None and ga10x.gpu is None
    assert [g.key for g in ga10x.candidates] == ["a10", "a10g", "a40", "rtx3070", "rtx3090"]
    unknown = infer_gpu("8.6", 999)
    assert unknown is not None and unknown.gpu is None
    assert unknown.candidates == () and unknown.evidence == "CC 8.6, 999 SMs"
    assert infer_gpu(None, 108) is None


def test_a_details_page_without_a_device_name_is_judged_on_the_inferred_gpu(fixtures: Path) -> None:
    # fixtures/details_unnamed_cc_sms.csv: CC 8.0, "# SMs" 108, no device name; 1 GB of DRAM
    # traffic in 1 ms -> at the A100 PCIe 40GB's 1555 GB/s (5120-bit / 4 = 1280 B/clk x its
    # 1.215 GHz boost: no DRAM clock in the file) 0.643 ms: memory-bound at 64.3 % of the roof
    path = fixtures / "details_unnamed_cc_sms.csv"
    analysis = analyzed(path)
    device = analysis.devices[0]
    assert device.name is None and device.cc == "8.0"
    assert device.roofs.name == (
        "A100 PCIe 40GB (inferred from CC 8.0, 108 SMs; also matches a100-pcie-80gb, a100-sxm4-40gb, "
        "a100-sxm4)"
    )
    assert device.roofs.sources["dram"].startswith("builtin:a100-pcie, inferred from CC 8.0, 108 SMs")
    kernel = analysis.kernels[0]
    assert kernel.verdict_basis is VerdictBasis.ROOFLINE and kernel.bound is Bound.MEMORY
    assert kernel.pct_of_roof == pytest.approx(100 * 1e9 / 1555e9 / 1e-3)
    # --gpu overrides: the A100 SXM4 80GB's 2039 GB/s
    chosen = analyzed(path, RoofChoice(gpu_key="a100-sxm4")).kernels[0]
    assert chosen.pct_of_roof == pytest.approx(100 * 1e9 / 2039e9 / 1e-3)
    done = run_cli("analyze", str(path))
    assert "note: device 0: A100 PCIe 40GB (inferred from CC 8.0, 108 SMs;" in done.stderr


def test_a_cc_alone_names_no_product_of_a_consumer_die() -> None:
    # the table's one CC 7.5 product is the T4 (40 SMs), its one CC 12.0 product the RTX 5090
    # (170 SMs): a GTX 1660 SUPER (22 SMs; no tensor cores) and an RTX 5060 Ti (36 SMs), whose
    # details pages hold a CC and no SM count, were judged on those GPUs' roofs under their names
    for cc, keys in (("7.5", ["t4"]), ("12.0", ["rtx5090"])):
        alone = infer_gpu(cc, None)
        assert alone is not None and alone.gpu is None and [g.key for g in alone.candidates] == keys
    t4 = infer_gpu("7.5", 40)  # with the SM count it holds, the product is named
    assert t4 is not None and t4.gpu is not None and t4.gpu.key == "t4"


@pytest.mark.corpus
def test_the_corpus_gtx_1660_super_details_page_is_no_t4(corpus: Path) -> None:
    (device,) = analyzed(corpus / "reexport" / "gtx1660s_rep_2021.1_raytracer.ncu2024.1-details.csv").devices
    assert (
        device.cc == "7.5" and device.roofs.name is None and "tensor" not in device.roofs.compute_flop_per_s
    )
