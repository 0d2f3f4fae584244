"""`tracekit schema trace` and `tracekit schema guard`: every line of the committed recordings validates
against the trace schema, the guard file of docs/guard.md against the guard schema (with the jsonschema
library), and each refuses what the readers refuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
import yaml
from click.testing import CliRunner

from tracekit.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


def schema_of(name: str) -> jsonschema.Draft202012Validator:
    result = CliRunner().invoke(cli, ["schema", name])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)
    jsonschema.Draft202012Validator.check_schema(document)
    return jsonschema.Draft202012Validator(document)


def test_every_line_of_the_recordings_is_a_record_of_the_trace_schema() -> None:
    validator = schema_of("trace")
    files = sorted((ROOT / "recordings").rglob("*.jsonl"))
    assert len(files) > 100
    kinds: set[str] = set()
    for path in files:
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            record = orjson.loads(line)
            errors = list(validator.iter_errors(record))
            assert not errors, f"{path}:{number}: {errors[0].message}"
            kinds.add(record["kind"])
    assert {"header", "model_call", "tool_call", "tool_result", "assistant_message"} <= kinds


@pytest.mark.parametrize(
    "record",
    [
        {"kind": "tool_kall", "index": 0, "name": "x", "message_index": 1},
        {"kind": "tool_call", "index": "first", "name": "x", "message_index": 1},
        {"kind": "tool_call", "index": 0, "message_index": 1},
        {"kind": "header"},
    ],
)
def test_the_trace_schema_refuses_what_the_reader_refuses(record: dict[str, Any]) -> None:
    assert not schema_of("trace").is_valid(record)


def guard_example() -> dict[str, Any]:
    """The guard file docs/guard.md shows."""
    text = (ROOT / "docs" / "guard.md").read_text(encoding="utf-8")
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    document: dict[str, Any] = yaml.safe_load(block)
    return document


def test_the_documented_guard_file_fits_the_guard_schema_and_mistakes_do_not() -> None:
    validator = schema_of("guard")
    example = guard_example()
    assert {"findings", "budgets"} <= set(example)
    assert validator.is_valid(example), list(validator.iter_errors(example))[:1]
    for wrong in (
        {"findings": {"looping": {"action": "stop"}}},
        {"findings": {"repeated_call": {"action": "halt"}}},
        {"budgets": {"tokens": {"limit": -5}}},
        {"budgets": {"coins": {"limit": 1}}},
    ):
        assert not validator.is_valid(wrong), wrong
