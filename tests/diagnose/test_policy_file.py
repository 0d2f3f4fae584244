"""Policy files: shipped ones load, errors name file, line and field, and the JSON Schema is printed."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.diagnose import PolicyError, load_policy


@pytest.mark.parametrize("name", ["tau-airline", "tau-retail"])
def test_the_shipped_policies_load_by_name_and_cite_their_source(name: str) -> None:
    policy = load_policy(name)
    assert policy.name == name
    assert any("sierra-research/tau-bench" in source for source in policy.sources)
    assert policy.tools_of("write") and policy.confirmation is not None and policy.preconditions


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("name: x\nconfirmation:\n  clases: [write]\n", ":3: confirmation.clases: Extra inputs are not permitted"),
        ("name: x\npreconditions:\n  - tool: a\n    holds: 'status =='\n", ":4: preconditions.0.holds:"),
        ("name: x\nlimits:\n  - tool: a\n    limit: -1\n", ":4: limits.0.limit:"),
        ("- a\n", ":1: expected a mapping"),
        ("name: [\n", "not valid YAML"),
    ],
)
def test_a_bad_policy_names_the_file_the_line_and_the_field(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError) as error:
        load_policy(path)
    assert str(path) in str(error.value) and where in str(error.value)


def test_an_unknown_policy_names_the_shipped_ones() -> None:
    with pytest.raises(PolicyError, match="tau-airline, tau-retail"):
        load_policy("no-such-policy")


def test_schema_policy_prints_the_json_schema_the_shipped_files_meet() -> None:
    result = CliRunner().invoke(cli, ["schema", "policy"])
    assert result.exit_code == 0
    document = json.loads(result.output)
    assert document["title"] == "tracekit policy file"
    assert document["additionalProperties"] is False
    assert {"classes", "confirmation", "preconditions", "final", "limits", "one_at_a_time", "open_task"} <= set(
        document["properties"]
    )
    shipped = Path(__file__).resolve().parents[2] / "tracekit" / "diagnose" / "policies"
    for path in shipped.glob("*.yaml"):
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), document)
