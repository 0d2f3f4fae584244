"""The published JSON Schema of the analyze JSON (`tracekit schema results`): the results of the committed
recordings validate against it with the jsonschema library, every field is described, and it refuses what
breaks the contract."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["schema", "results"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)
    jsonschema.Draft202012Validator.check_schema(document)
    return document


@pytest.fixture(scope="module")
def recorded_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("results") / "results.json"
    result = CliRunner().invoke(cli, ["analyze", str(ROOT / "recordings"), "--cases", str(ROOT / "cases"),
                                      "--json", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return document


def test_the_recordings_results_validate_against_the_published_schema(
    schema: dict[str, Any], recorded_results: dict[str, Any]
) -> None:
    jsonschema.Draft202012Validator(schema).validate(recorded_results)
    summary = recorded_results["summary"]
    assert summary["bound_to_case"] == len(recorded_results["traces"]) > 100  # verdicts, checks, judge and A/B
    assert summary["ab"] is not None and summary["reliability"] is not None


def test_every_field_is_described(schema: dict[str, Any]) -> None:
    undescribed = [f"{model}.{name}" for model, name, field in _properties(schema) if not field.get("description")]
    assert undescribed == []
    assert {"trace_id", "source", "verdict", "summary", "trace_file"} <= {name for _, name, _ in _properties(schema)}


def test_it_refuses_results_that_break_the_contract(schema: dict[str, Any], recorded_results: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    no_trace_id = copy.deepcopy(recorded_results)
    del no_trace_id["traces"][0]["trace_id"]
    bad_result = copy.deepcopy(recorded_results)
    bad_result["traces"][0]["verdict"]["result"] = "great"
    for broken in (no_trace_id, bad_result):
        assert not validator.is_valid(broken)
    grown = copy.deepcopy(recorded_results)
    grown["traces"][0]["added_later"] = {"by": "a newer tracekit"}  # extend, never rename: still valid
    assert validator.is_valid(grown)


def _properties(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for model, definition in [("Results", schema), *schema.get("$defs", {}).items()]:
        for name, field in definition.get("properties", {}).items():
            yield model, name, field
