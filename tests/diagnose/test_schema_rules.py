"""Schema invariants: every call against the schema its own request declared, with no configuration.

The recordings are made by the real SDKs (anthropic, openai) through ``tracekit record`` to the scripted
fake upstream, whose scripted tool calls break the declared schemas on purpose; hand-built traces cover each
JSON Schema rule one at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tracekit.diagnose import Conversation, trace_violations
from tracekit.diagnose.schema_rules import _validator, declared_tools
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, ToolUse, by_turn, text_reply, tool_use_reply
from tracekit.trace import Header, ModelCall, Trace, TraceBuilder, load_trace

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "date": {"type": "string", "format": "date"},
    },
    "required": ["city"],
    "additionalProperties": False,
}
ANTHROPIC_TOOLS = [{"name": "get_weather", "description": "weather", "input_schema": SCHEMA}]
OPENAI_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "weather", "parameters": SCHEMA}}
]
SCRIPT = by_turn([
    tool_use_reply([ToolUse("get_weather", {"days": "3"}), ToolUse("get_forecast", {"city": "北京"})]),
    text_reply("北京晴。"),
])  # fmt: skip


def _rules(trace: Trace) -> list[tuple[int | None, str, str]]:
    return [(v.call, v.rule, v.message) for v in trace_violations(trace, Conversation.of(trace))]


def _weather_loop(client: anthropic.Anthropic) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "北京天气？"}]
    for _ in range(3):
        reply = client.messages.create(
            model="claude-test",
            max_tokens=64,
            messages=messages,  # type: ignore[arg-type]
            tools=ANTHROPIC_TOOLS,  # type: ignore[arg-type]
        )
        if reply.stop_reason != "tool_use":
            return
        messages.append({"role": "assistant", "content": reply.content})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": b.id, "content": "晴"}
                                                     for b in reply.content if b.type == "tool_use"]})  # fmt: skip


def _openai_loop(client: openai.OpenAI) -> None:
    messages: list[Any] = [{"role": "user", "content": "北京天气？"}]
    for _ in range(3):
        reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=OPENAI_TOOLS)  # type: ignore[arg-type]
        message = reply.choices[0].message
        if not message.tool_calls:
            return
        messages.append(message.model_dump(exclude_none=True))
        messages.extend({"role": "tool", "tool_call_id": c.id, "content": "晴"} for c in message.tool_calls)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_calls_recorded_from_the_real_sdks_are_checked_against_their_declared_schema(
    tmp_path: Path, provider: str
) -> None:
    with (
        FakeUpstream(SCRIPT) as upstream,
        RunningProxy(ProxyConfig(upstream=upstream.url, out_dir=tmp_path, redactor=Redactor())) as proxy,
    ):  # tracekit record in front of the fake upstream, as tests/proxy runs it
        if provider == "anthropic":
            _weather_loop(anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0))
        else:
            _openai_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0))
    (path,) = tmp_path.glob("*.jsonl")
    found = _rules(load_trace(path))
    assert [(call, rule) for call, rule, _ in found] == [
        (0, "schema:required"), (0, "schema:type"), (1, "schema:undeclared_tool"),
    ]  # fmt: skip
    assert "city" in found[0][2] and "days" in found[1][2] and "get_forecast" in found[2][2]


def _trace(arguments: Any, tools: list[dict[str, Any]] | None = ANTHROPIC_TOOLS, name: str = "get_weather") -> Trace:
    builder = TraceBuilder(Header(trace_id="t"))
    builder.add_conversation([{"role": "user", "content": "天气"}])
    request = {"model": "m", "messages": [], **({"tools": tools} if tools is not None else {})}
    reply = {"role": "assistant", "content": [{"type": "tool_use", "id": "tu1", "name": name, "input": arguments}]}
    builder.add_model_call(ModelCall(index=0, provider="anthropic", request=request), reply)
    result = {"type": "tool_result", "tool_use_id": "tu1", "content": "ok"}
    builder.add_conversation([{"role": "user", "content": [result]}])
    return Trace(header=builder.records[0], records=builder.records[1:])


@pytest.mark.parametrize(
    ("arguments", "rule", "field"),
    [
        ({}, "schema:required", "city"),
        ({"city": 3}, "schema:type", "city"),
        ({"city": "北京", "unit": "k"}, "schema:enum", "unit"),
        ({"city": "北京", "date": "2024-13-45"}, "schema:format", "date"),
        ({"city": "北京", "extra": 1}, "schema:additionalProperties", "extra"),
    ],
)
def test_each_schema_rule_is_named_with_its_field(arguments: dict[str, Any], rule: str, field: str) -> None:
    ((call, found, message),) = _rules(_trace(arguments))
    assert (call, found) == (0, rule)
    assert f"get_weather: {field} breaks the schema's {rule.split(':')[1]!r} rule" in message


def test_valid_calls_and_requests_without_tools_break_nothing() -> None:
    assert _rules(_trace({"city": "北京", "days": 3, "unit": "c", "date": "2024-05-01"})) == []
    assert _rules(_trace({"anything": 1}, tools=None)) == []  # no declaration: nothing to check against


def test_a_call_to_a_tool_the_request_did_not_declare() -> None:
    ((call, rule, message),) = _rules(_trace({"city": "x"}, name="get_forecast"))
    assert (call, rule) == (0, "schema:undeclared_tool") and "declared: get_weather" in message


def test_the_three_providers_declarations_are_read() -> None:
    responses = [{"type": "function", "name": "f", "parameters": SCHEMA}]
    for tools in (ANTHROPIC_TOOLS, OPENAI_TOOLS):
        assert declared_tools({"tools": tools}) == {"get_weather": SCHEMA}
    assert declared_tools({"tools": responses}) == {"f": SCHEMA}
    assert declared_tools({"tools": [{"type": "web_search"}, {"name": "bash", "type": "bash_20250124"}]}) == {
        "bash": None
    }
    assert declared_tools({"messages": []}) is None


def test_a_schema_is_compiled_once() -> None:
    _validator.cache_clear()
    for _ in range(3):
        _rules(_trace({}))
    assert _validator.cache_info().misses == 1 and _validator.cache_info().hits == 2
