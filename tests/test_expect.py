"""Predict-vs-measure: expectations checked against a synthetic analysis and a real report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import analyzed

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.records import Kernel
from ncu_roof.base.vocabulary import Bound
from ncu_roof.compare.expect import (
    HINT,
    Status,
    check,
    gate,
    load_expectations,
    parse_expectations,
    render_expectations,
)
from ncu_roof.errors import BadInputError, GateError

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "ncu-corpus"
SILU_REPORT = CORPUS / "a100sxm_rep_2025.1_full_silu.ncu-rep"
SILU_ELEMENTS = 2**26  # y = silu(x) over 64 Mi floats: 4 B read + 4 B written per element


def kernel(name: str, bound: Bound, binding: str | None, flop: float, dram_bytes: float) -> Kernel:
    return Kernel(
        id=7,
        name=name,
        input=0,
        device=0,
        grid=None,
        block=None,
        duration_s=1e-3,
        flop={"total": flop},
        bytes={"dram": dram_bytes},
        intensity_flop_per_byte={"dram": flop / dram_bytes},
        achieved_flop_per_s=flop / 1e-3,
        achieved_byte_per_s={"dram": dram_bytes / 1e-3},
        attainable_flop_per_s=None,
        cap_flop_per_s={},
        binding=binding,
        bound=bound,
        roofline_binding=binding,
        compute_precision="fp32",
        pct_of_roof=80.0,
        sol_pct={},
        recipe={},
        notes=(),
    )


def synthetic() -> Analysis:
    # a vector add of 1e6 fp32 elements (model: 1e6 FLOP, 12 MB) that moved 37.2 MB from DRAM
    vadd = kernel("void vadd<float>(float*, float*, float*)", Bound.MEMORY, "dram", 1e6, 37.2e6)
    return Analysis(inputs=(), devices=(), kernels=(vadd,))


def test_synthetic_bytes_3_1x_the_model_is_contradicted_with_the_reason() -> None:
    expectations = parse_expectations(
        {
            "expect": [
                {
                    "kernel": "vadd",
                    "bound": "memory",
                    "binding": "dram",
                    "workload": "vector-add",
                    "n": 1_000_000,
                }
            ]
        }
    )
    report = check(synthetic(), expectations)
    (result,) = report.checks
    assert result.status is Status.CONTRADICTED
    assert result.explanation.startswith(
        "memory-bound at dram (80% of its roof) as expected, but measured DRAM bytes are 3.1× "
        "the model's minimum (beyond the 1.5× tolerance): data is read more than once"
    )


def one_kernel(flop: float, dram_bytes: float) -> Analysis:
    gemm = kernel("gemm_f32", Bound.COMPUTE, "compute", flop, dram_bytes)
    return Analysis(inputs=(), devices=(), kernels=(gemm,))


def test_verdict_as_expected_but_bytes_beyond_tolerance_says_the_tolerance_was_exceeded() -> None:
    # the reviewer's case: "compute-bound … as expected; … DRAM bytes are 1.6×" read as a pass
    expectations = parse_expectations(
        {"expect": [{"kernel": "gemm", "bound": "compute", "flop": 1e9, "bytes": 1e6}]}
    )
    (result,) = check(one_kernel(1e9, 1.6e6), expectations).checks
    assert result.status is Status.CONTRADICTED
    assert result.explanation.startswith(
        "compute-bound (80% of its roof) as expected, but measured DRAM bytes are 1.6× the "
        "model's minimum (beyond the 1.5× tolerance): "
    )
    assert "measured FLOPs are 1.0× the model's (within the 1.5× tolerance)" in result.explanation


@pytest.mark.parametrize(
    ("flop", "tolerance", "words"),
    [
        (1.54e9, 1.5, "FLOPs are 1.54× the model's (beyond the 1.5× tolerance)"),  # not "1.5×"
        (0.4e9, 2, "FLOPs are 0.40× the model's (below 1/2× = 0.50×, the tolerance)"),
        (0.666e9, 1.5, "FLOPs are 0.666× the model's (below 1/1.5× = 0.67×, the tolerance)"),
        (1.9e9, 2, "FLOPs are 1.9× the model's (within the 2× tolerance)"),
    ],
)
def test_every_count_outside_the_tolerance_says_which_side(flop: float, tolerance: float, words: str) -> None:
    expectations = parse_expectations(
        {"expect": [{"kernel": "gemm", "bound": "compute", "flop": 1e9, "tolerance": tolerance}]}
    )
    (result,) = check(one_kernel(flop, 1e6), expectations).checks
    assert words in result.explanation
    assert result.status is (Status.CONFIRMED if "within" in words else Status.CONTRADICTED)


def test_report_to_json_lists_checks_unmatched_patterns_and_counts() -> None:
    report = check(
        synthetic(),
        parse_expectations(
            {"expect": [{"kernel": "vadd", "bound": "compute"}, {"kernel": "^gemm", "bound": "compute"}]}
        ),
    )
    document = report.to_json()
    assert json.loads(json.dumps(document)) == document  # plain JSON types only
    assert document["schema"] == "ncu-roof/expectations/v1"
    (item,) = document["checks"]
    assert item["kernel_id"] == 7
    assert item["kernel_name"] == "void vadd<float>(float*, float*, float*)"
    assert (item["pattern"], item["status"]) == ("vadd", "contradicted")
    assert (item["expected"], item["measured"]) == ("compute-bound", "memory-bound at dram (80% of its roof)")
    assert item["explanation"] == report.checks[0].explanation
    # the why alone, after what the expected and measured verdicts already say
    stated = f"expected {item['expected']}, measured {item['measured']}: "
    assert item["explanation"] == stated + item["reason"]
    assert document["unmatched_patterns"] == ["^gemm"]
    assert document["counts"] == {"confirmed": 0, "contradicted": 1, "unknown": 0, "unmatched_patterns": 1}


def test_synthetic_verdict_matches_and_counts_within_tolerance_is_confirmed() -> None:
    expectations = parse_expectations(
        {"expect": [{"kernel": "vadd", "bound": "memory", "bytes": {"dram": "30MB"}, "flop": 1e6}]}
    )
    (result,) = check(synthetic(), expectations).checks
    assert result.status is Status.CONFIRMED
    assert "DRAM bytes are 1.2× the model's minimum" in result.explanation
    gate(check(synthetic(), expectations))  # nothing contradicted: no GateError


def test_synthetic_compute_expected_but_memory_bound_explains_reuse() -> None:
    report = check(
        synthetic(),
        parse_expectations(
            {"expect": [{"kernel": "vadd", "bound": "compute"}, {"kernel": "^gemm", "bound": "compute"}]}
        ),
    )
    (result,) = report.checks
    assert result.status is Status.CONTRADICTED
    assert result.explanation.startswith("expected compute-bound, measured memory-bound at dram")
    assert "below the ridge point" in result.explanation
    assert report.unmatched_patterns == ("^gemm",)
    text = render_expectations(report)
    assert "CONTRADICTED #7" in text and "UNMATCHED    /^gemm/" in text
    assert "0 confirmed, 1 contradicted, 0 unknown, 1 unmatched pattern(s)" in text
    with pytest.raises(GateError) as err:
        gate(report)
    assert err.value.exit_code == 1


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"kernel": "x", "bound": "slow"}, "bound must be"),
        ({"kernel": "(", "bound": "memory"}, "not a valid regex"),
        ({"kernel": "x", "bound": "compute", "binding": "dram"}, "binds at compute"),
        ({"kernel": "x", "bound": "memory", "bytes": "3 FLOP"}, "is not a byte"),
        ({"kernel": "x", "bound": "memory", "workload": "gemm", "m": 4}, "needs n, k"),
        ({"kernel": "x", "bound": "memory", "n": 4}, "needs a workload"),
        ({"kernel": "x", "bound": "memory", "colour": "red"}, "unknown key"),
        ({"kernel": "x", "bound": "memory", "tolerance": "abc"}, "tolerance is a finite ratio"),
        ({"kernel": "x", "bound": "memory", "tolerance": "2"}, "tolerance is a finite ratio"),
        ({"kernel": "x", "bound": "memory", "tolerance": float("nan")}, "tolerance is a finite ratio"),
        ({"kernel": "x", "bound": "memory", "tolerance": float("inf")}, "tolerance is a finite ratio"),
        ({"kernel": "x", "bound": "memory", "tolerance": True}, "tolerance is a finite ratio"),
        ({"kernel": "x", "bound": "memory", "tolerance": 0.5}, "tolerance is a finite ratio"),
        ({"kernel": "x", "bound": "memory", "tolerance": [2]}, "tolerance is a finite ratio"),
        ({"kernel": "x", "bound": "memory", "flop": float("nan")}, "not a finite number"),
        # a tier no kernel has: its bytes were never checked, its binding contradicted every kernel
        ({"kernel": "x", "bound": "memory", "bytes": {"hbm": "1GB"}}, "bytes of 'hbm': the tiers are"),
        ({"kernel": "x", "bound": "memory", "binding": "hbm"}, "binding 'hbm' is no roof"),
        ({"kernel": "x", "bound": "memory", "binding": "Compute"}, "binds at a memory tier, not compute"),
    ],
)
def test_bad_expectations_are_bad_input(table: dict[str, object], message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        parse_expectations({"expect": [table]})


def test_bad_tolerance_in_a_file_is_bad_input_with_the_hint(tmp_path: Path) -> None:
    path = tmp_path / "expect.toml"
    for value in ('"abc"', "nan", "inf", "true", "0.9"):
        path.write_text(f'[[expect]]\nkernel = "vadd"\nbound = "memory"\ntolerance = {value}\n')
        with pytest.raises(BadInputError, match="tolerance") as err:
            load_expectations(str(path))
        assert err.value.hint == HINT and str(path) in err.value.message
    path.write_text('[[expect]]\nkernel = "vadd"\nbound = "memory"\ntolerance = 2\n')
    assert load_expectations(str(path))[0].tolerance == 2.0


def test_load_expectations_file(tmp_path: Path) -> None:
    path = tmp_path / "expect.toml"
    path.write_text('[[expect]]\nkernel = "vadd"\nbound = "memory"\nbinding = "dram"\n')
    (e,) = load_expectations(str(path))
    assert (e.kernel_pattern, e.bound, e.binding) == ("vadd", Bound.MEMORY, "dram")
    with pytest.raises(BadInputError, match="no such"):
        load_expectations(str(tmp_path / "missing.toml"))
    with pytest.raises(BadInputError, match="is a directory, not a TOML file"):
        load_expectations(str(tmp_path))
    for broken in (b'[[expect]\nkernel = "vadd"\n', b'[[expect]]\nkernel = "\xff"\n'):  # no TOML, no UTF-8
        path.write_bytes(broken)
        with pytest.raises(BadInputError, match="not valid TOML") as err:
            load_expectations(str(path))
        assert err.value.hint == HINT


@pytest.fixture(scope="module")
def silu() -> Analysis:
    if not SILU_REPORT.exists():
        pytest.skip(f"{CORPUS} is absent")
    return analyzed(SILU_REPORT)


@pytest.mark.corpus
def test_corpus_silu_memory_bound_at_dram_is_confirmed(silu: Analysis) -> None:
    report = check(
        silu,
        parse_expectations(
            {
                "expect": [
                    {
                        "kernel": "silu_kernel",
                        "bound": "memory",
                        "binding": "dram",
                        "bytes": SILU_ELEMENTS * 8,
                    }
                ]
            }
        ),
    )
    assert len(report.checks) == 3  # three launches of silu_kernel
    assert all(c.status is Status.CONFIRMED for c in report.checks)
    assert all("DRAM bytes are 0.98× the model's minimum" in c.explanation for c in report.checks)


@pytest.mark.corpus
def test_corpus_silu_contradicts_compute_and_l2_and_a_third_of_the_bytes(silu: Analysis) -> None:
    report = check(
        silu,
        parse_expectations(
            {
                "expect": [
                    {"kernel": "silu", "bound": "compute"},
                    {"kernel": "silu", "bound": "memory", "binding": "l2"},
                    {"kernel": "silu", "bound": "memory", "bytes": {"dram": "170MB"}},
                    {"kernel": "flash_attn", "bound": "compute"},
                ]
            }
        ),
    )
    assert [c.status for c in report.checks] == [Status.CONTRADICTED] * 9
    assert "measured DRAM bytes are 3.1× the model's minimum" in report.checks[-1].explanation
    assert report.unmatched_patterns == ("flash_attn",)
    with pytest.raises(GateError):
        gate(report)


@pytest.mark.parametrize(
    ("tier", "words"),
    [("dram", "DRAM"), ("l2", "L2"), ("l1", "L1"), ("shared", "shared-memory"), ("hbm3", "hbm3")],
)
def test_bytes_sentences_name_the_tier_in_the_vocabularys_words(tier: str, words: str) -> None:
    from dataclasses import replace

    from ncu_roof.compare.expect import Expectation, _count_gaps

    measured = replace(kernel("k", Bound.MEMORY, tier, 1.0, 1.0), bytes={tier: 2.0})
    ((outside, text),) = _count_gaps(measured, Expectation("k", Bound.MEMORY, bytes_by_tier={tier: 1.0}))
    assert outside and text.startswith(f"measured {words} bytes are 2")
