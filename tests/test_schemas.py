"""Every JSON output validates against its JSON Schema in docs/schemas/ (a contract that cannot
go stale): the example, real reports, predictions, diffs and the GPU table, through the CLI."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, analyzed, run_cli
from jsonschema import Draft202012Validator, ValidationError
from test_diff import BASE, HEAD, write

SCHEMAS = ROOT / "docs" / "schemas"
NAMES = ("analysis.v1", "prediction.v1", "diff.v1", "gpus.v1", "history-show.v1", "history-check.v1")


def schema_of(name: str) -> dict[str, Any]:
    """The schema file `docs/schemas/NAME.schema.json`, checked to be a valid 2020-12 schema."""
    schema: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return schema


@functools.cache  # one checked schema per session: the validator keeps no state between documents
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(schema_of(name))


def output(*args: str) -> dict[str, Any]:
    """The JSON `ncu-roof ARGS…` prints (a fresh copy: tests may change it)."""
    document: dict[str, Any] = json.loads(_stdout(*args))
    return document


@functools.cache  # the same command run once per session
def _stdout(*args: str) -> str:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def assert_valid(name: str, document: dict[str, Any]) -> None:
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(e.absolute_path))
    assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []


def test_every_schema_file_is_a_valid_2020_12_schema_named_for_its_contract() -> None:
    assert sorted(p.name for p in SCHEMAS.glob("*.schema.json")) == sorted(f"{n}.schema.json" for n in NAMES)
    for name in NAMES:
        schema = schema_of(name)
        kind, version = name.split(".")
        assert schema["properties"]["schema"] == {"const": f"ncu-roof/{kind}/{version}"}


def test_the_example_analysis_validates() -> None:
    document = output("analyze", "--example", "--format", "json")
    assert len(document["kernels"]) == 7
    assert_valid("analysis.v1", document)


def test_the_analysis_with_expectations_validates(tmp_path: Path) -> None:
    expectations = tmp_path / "expect.toml"
    expectations.write_text('[[expect]]\nkernel = "silu"\nbound = "memory"\nbinding = "dram"\n')
    document = output("analyze", "--example", "-F", "json", "--expect", str(expectations))
    assert document["expectations"]["counts"]["confirmed"] == 3
    assert_valid("analysis.v1", document)


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("a10_rep_2023.2.0_105-kernels-llm.ncu-rep", []),
        ("a100pcie_rep_2022.4.0_all-nan-failed.ncu-rep", []),
        ("a100_details_nersc-roofline-partial_cutlass-gemm.csv", ["--gpu", "a100-sxm4"]),
        ("b200_raw-units_torch-sdpa-flash-decode.csv", []),
    ],
)
def test_real_reports_validate(corpus: Path, name: str, extra: list[str]) -> None:
    if "failed" in name:  # the CLI refuses a capture that measured nothing: the library's JSON
        from ncu_roof.render.jsonout import render_json

        document = json.loads(render_json(analyzed(corpus / name)))
    else:
        document = output("analyze", str(corpus / name), "--format", "json", *extra)
    assert document["kernels"]
    assert_valid("analysis.v1", document)


@pytest.mark.parametrize(
    "args",
    [
        ["vector-add", "--n", "1e7", "--dtype", "fp32", "--gpu", "a100-sxm4"],
        ["gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "fp16", "--gpu", "h100-sxm5"],
        ["--peak", "100GFLOP/s", "--bandwidth", "dram=20GB/s", "--intensity", "dram=0.25"],
    ],
)
def test_predictions_validate(args: list[str]) -> None:
    assert_valid("prediction.v1", output("predict", *args, "--format", "json"))


def test_the_gpu_table_validates() -> None:
    document = output("gpus", "--format", "json")
    assert len(document["gpus"]) > 10
    assert_valid("gpus.v1", document)


def test_a_diff_validates() -> None:
    base, head = write("base.csv", BASE), write("head.csv", HEAD)
    document = output("diff", base, head, "--format", "json")
    assert {k["status"] for k in document["kernels"]} >= {"only-base", "only-head"}
    assert_valid("diff.v1", document)


def test_added_fields_pass_but_a_missing_or_mistyped_documented_field_fails() -> None:
    document = output("analyze", "--example", "--format", "json")
    check = validator("analysis.v1")
    added = {**document, "new_field": 1, "kernels": [{**document["kernels"][0], "extra": [1]}]}
    check.validate(added)  # fields may be added within v1
    missing = {**document, "kernels": [{k: v for k, v in document["kernels"][0].items() if k != "bound"}]}
    with pytest.raises(ValidationError, match="'bound' is a required property"):
        check.validate(missing)
    renamed = {**document, "kernels": [{**document["kernels"][0], "duration_s": "284 µs"}]}
    with pytest.raises(ValidationError, match="is not of type"):
        check.validate(renamed)
    other_version = {**document, "schema": "ncu-roof/analysis/v2"}
    with pytest.raises(ValidationError, match="was expected"):
        check.validate(other_version)
