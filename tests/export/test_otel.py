"""OTLP JSON export: the document shape, GenAI attributes, content only when asked, redaction, ids."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from tracekit.cli import cli
from tracekit.export import SEMCONV_VERSION, otlp_document
from tracekit.redact import Redactor
from tracekit.trace import (
    AssistantMessage,
    Header,
    ModelCall,
    SystemMessage,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    load_trace,
    write_trace,
)

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"


def _write(path: Path, *, with_model_calls: bool = True) -> Path:
    """A two-turn trace made in code: one tool call that fails, a secret pasted into the prompt."""
    records: list[Any] = [
        Header(trace_id="otel-1", provider="anthropic", model="claude-test", session="sess-1", case_id="B2-FR-01",
               group="B", repeat=0, created="2026-04-07T09:00:00Z"),
        SystemMessage(content="你是旅行助手。", t=1775552400.0),
        UserMessage(message_index=0, content=f"查明天北京的天气 {SECRET}", t=1775552400.0),
    ]
    if with_model_calls:
        records.append(ModelCall(index=0, provider="anthropic", model="claude-test", status=200, latency_ms=500.0,
                                 usage=Usage(input_tokens=50, output_tokens=20), stop_reason="tool_use",
                                 response={"id": "msg_1", "model": "claude-test-2026"}, t=1775552401.0))
    records += [
        AssistantMessage(message_index=1, content=[
            {"type": "tool_use", "id": "tu_1", "name": "maps_weather", "input": {"city": "北京"}}],
            stop_reason="tool_use", model_call=0 if with_model_calls else None, t=1775552401.0),
        ToolCall(index=0, id="tu_1", name="maps_weather", input={"city": "北京"}, message_index=1,
                 model_call=0 if with_model_calls else None, t=1775552401.0),
        ToolResult(call_index=0, tool_use_id="tu_1", name="maps_weather", content="Error: 服务不可用", is_error=True,
                   message_index=2, t=1775552402.0),
    ]
    if with_model_calls:
        records.append(ModelCall(index=1, provider="anthropic", model="claude-test", status=529, latency_ms=300.0,
                                 error={"type": "overloaded_error"}, t=1775552403.0))
    records.append(AssistantMessage(message_index=3, content=[{"type": "text", "text": "天气服务暂时不可用。"}],
                                    stop_reason="end_turn", model_call=1 if with_model_calls else None,
                                    t=1775552403.0))
    # Written without redaction, so that the exporter's own redaction is what the tests see.
    return write_trace(path, records, redactor=Redactor(patterns=()))


def _spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    (resource,) = document["resourceSpans"]
    (scope,) = resource["scopeSpans"]
    assert scope["scope"]["name"] == "tracekit.export.otel"
    assert scope["schemaUrl"].endswith(SEMCONV_VERSION)
    return scope["spans"]


def _attributes(span: dict[str, Any]) -> dict[str, Any]:
    values = {}
    for attribute in span["attributes"]:
        (kind, value), = attribute["value"].items()
        values[attribute["key"]] = value if kind != "arrayValue" else [next(iter(v.values())) for v in value["values"]]
    return values


def test_otlp_json_shape(tmp_path: Path) -> None:
    spans = _spans(otlp_document([load_trace(_write(tmp_path / "t.jsonl"))]))
    assert [span["name"] for span in spans] == [
        "invoke_agent agent", "chat claude-test", "chat claude-test", "execute_tool maps_weather"]
    root, *children = spans
    assert re.fullmatch(r"[0-9a-f]{32}", root["traceId"]) and re.fullmatch(r"[0-9a-f]{16}", root["spanId"])
    assert "parentSpanId" not in root
    assert len({span["spanId"] for span in spans}) == len(spans)
    for span in spans:
        assert span["traceId"] == root["traceId"]
        assert re.fullmatch(r"\d+", span["startTimeUnixNano"]) and re.fullmatch(r"\d+", span["endTimeUnixNano"])
        assert int(span["startTimeUnixNano"]) <= int(span["endTimeUnixNano"])
        for attribute in span["attributes"]:
            assert set(attribute) == {"key", "value"} and len(attribute["value"]) == 1
    for child in children:
        assert child["parentSpanId"] == root["spanId"]
        assert int(root["startTimeUnixNano"]) <= int(child["startTimeUnixNano"])
        assert int(child["endTimeUnixNano"]) <= int(root["endTimeUnixNano"])
    assert [span["kind"] for span in spans] == [1, 3, 3, 1]  # INTERNAL, CLIENT, CLIENT, INTERNAL


def test_gen_ai_attributes(tmp_path: Path) -> None:
    root, chat, failed_chat, tool = _spans(otlp_document([load_trace(_write(tmp_path / "t.jsonl"))]))
    agent = _attributes(root)
    assert agent["gen_ai.operation.name"] == "invoke_agent" and agent["gen_ai.conversation.id"] == "sess-1"
    assert agent["tracekit.case_id"] == "B2-FR-01" and agent["tracekit.repeat"] == "0"
    chat_attributes = _attributes(chat)
    assert chat_attributes["gen_ai.operation.name"] == "chat"
    assert chat_attributes["gen_ai.provider.name"] == "anthropic"
    assert chat_attributes["gen_ai.request.model"] == "claude-test"
    assert chat_attributes["gen_ai.response.model"] == "claude-test-2026"
    assert chat_attributes["gen_ai.response.id"] == "msg_1"
    assert chat_attributes["gen_ai.usage.input_tokens"] == "50"
    assert chat_attributes["gen_ai.usage.output_tokens"] == "20"
    assert chat_attributes["gen_ai.response.finish_reasons"] == ["tool_use"]
    assert chat["startTimeUnixNano"] == "1775552401000000000"  # the request's time, then its latency
    assert int(chat["endTimeUnixNano"]) - int(chat["startTimeUnixNano"]) == 500_000_000
    assert tool["startTimeUnixNano"] == chat["endTimeUnixNano"]  # the tool runs after the reply that asked
    assert tool["endTimeUnixNano"] == "1775552402000000000"  # until its result was sent back
    assert failed_chat["status"]["code"] == 2 and _attributes(failed_chat)["error.type"] == "529"
    tool_attributes = _attributes(tool)
    assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_attributes["gen_ai.tool.name"] == "maps_weather" and tool_attributes["gen_ai.tool.call.id"] == "tu_1"
    assert tool["status"]["code"] == 2 and tool_attributes["error.type"] == "tool_error"


def test_content_only_with_content(tmp_path: Path) -> None:
    trace = load_trace(_write(tmp_path / "t.jsonl"))
    bare = orjson.dumps(otlp_document([trace])).decode()
    assert "北京" not in bare and "天气" not in bare and "gen_ai.input.messages" not in bare
    _, chat, _, tool = _spans(otlp_document([trace], with_content=True))
    chat_attributes, tool_attributes = _attributes(chat), _attributes(tool)
    system = orjson.loads(chat_attributes["gen_ai.system_instructions"])
    assert system == [{"type": "text", "content": "你是旅行助手。"}]
    messages = orjson.loads(chat_attributes["gen_ai.input.messages"])
    assert messages == [{"role": "user", "parts": [{"type": "text", "content": f"查明天北京的天气 {SECRET}"}]}]
    output = orjson.loads(chat_attributes["gen_ai.output.messages"])
    assert output[0]["finish_reason"] == "tool_call"
    assert output[0]["parts"] == [{"type": "tool_call", "id": "tu_1", "name": "maps_weather",
                                   "arguments": {"city": "北京"}}]
    assert orjson.loads(tool_attributes["gen_ai.tool.call.arguments"]) == {"city": "北京"}
    assert tool_attributes["gen_ai.tool.call.result"] == "Error: 服务不可用"


def test_traces_without_model_calls_get_a_chat_span_per_answer(tmp_path: Path) -> None:
    spans = _spans(otlp_document([load_trace(_write(tmp_path / "t.jsonl", with_model_calls=False))]))
    assert [span["name"] for span in spans] == [
        "invoke_agent agent", "chat claude-test", "chat claude-test", "execute_tool maps_weather"]


def test_same_trace_same_spans(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl")
    assert orjson.dumps(otlp_document([load_trace(path)])) == orjson.dumps(otlp_document([load_trace(path)]))


@pytest.mark.parametrize("with_content", [False, True])
def test_export_command_redacts_and_exits_0(tmp_path: Path, with_content: bool) -> None:
    _write(tmp_path / "traces" / "a.jsonl")
    out = tmp_path / "spans.json"
    args = ["export", "otel", str(tmp_path / "traces"), "--out", str(out)]
    args += ["--with-content"] if with_content else []
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "1 traces, 4 spans" in result.output
    text = out.read_text(encoding="utf-8")
    assert SECRET not in text
    assert ("[REDACTED]" in text) == with_content
    assert "天气" in text if with_content else "天气" not in text


def test_export_unreadable_input_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["export", "otel", str(tmp_path / "missing"), "--out", str(tmp_path / "o.json")])
    assert result.exit_code == 2
