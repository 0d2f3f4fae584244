"""The tool-layer policy: fault specs, which call a fault hits, and a case's tool_mock in call order."""

from __future__ import annotations

import pytest

from tracekit.errors import CaseError
from tracekit.intercepts import config_from
from tracekit.mcp import ToolFault, ToolPolicy


def test_fault_specs_read_type_value_tool_and_calls() -> None:
    assert ToolFault.parse("timeout") == ToolFault("timeout")
    assert ToolFault.parse("latency:250@maps_weather#1,3") == ToolFault("latency", "250", "maps_weather",
                                                                         frozenset({1, 3}))  # fmt: skip
    assert ToolFault.parse("error:服务不可用@add").value == "服务不可用"
    for bad, says in [("explode", "type must be one of"), ("latency", "takes milliseconds"),
                      ("latency:-1", "takes milliseconds"), ("cut#x", "call numbers")]:  # fmt: skip
        with pytest.raises(CaseError, match=says):
            ToolFault.parse(bad)


def test_a_fault_counts_only_the_calls_of_its_tool() -> None:
    policy = ToolPolicy(faults=[ToolFault.parse("timeout@maps_weather#2")])
    hits = [policy.fault_for(tool) for tool in ("maps_weather", "add", "maps_weather", "maps_weather")]
    assert [hit.kind if hit else None for hit in hits] == [None, None, "timeout", None]


def test_a_tool_mock_answers_by_params_then_in_order() -> None:
    mock = {"type": "tool_mock", "mocked_calls": [
        {"tool": "add", "params_match": {"a": 1}, "inject_result": {"content": "一", "is_error": False}},
        {"tool": "add", "inject_result": {"content": "first", "is_error": False}},
        {"tool": "add", "inject_result": {"content": "then", "is_error": True}},
    ]}  # fmt: skip
    policy = ToolPolicy(config_from(mock))
    answers = [policy.replacement_for("add", {"a": a, "b": 0}) for a in (5, 1, 6, 7)]
    assert [(r.content, r.is_error) for r in answers if r] == [("first", False), ("一", False), ("then", True),
                                                                ("then", True)]  # fmt: skip
    assert policy.replacement_for("maps_weather", {"city": "北京"}) is None
