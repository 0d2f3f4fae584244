"""google-genai (the official Gemini SDK) through ``tracekit record`` to the fake upstream, then through
``tracekit replay`` with the upstream gone: one trace per session with its calls, tool calls and results,
the same output from the client both times, and the key (``x-goog-api-key`` or ``?key=``) never on disk."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from google import genai
from google.genai import types

from tracekit.cli import cli
from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply

from .helpers import of_kind, recording, replaying, trace_records

KEY = "AIzaSyTracekitTestKey0123456789abcdefghi"
MODEL = "gemini-2.5-flash"
SCRIPT = by_turn([
    tool_use_reply([ToolUse("get_weather", {"city": "北京"}), ToolUse("get_weather", {"city": "上海"})],
                   text="我查一下北京和上海的天气。"),
    text_reply("北京晴，上海多云。"),
])  # fmt: skip


def get_weather(city: str) -> str:
    """The weather of a city."""
    return {"北京": "晴", "上海": "多云"}.get(city, "未知")


WEATHER_TOOL = types.Tool(function_declarations=[types.FunctionDeclaration(
    name="get_weather", description="The weather of a city.",
    parameters=types.Schema(type=types.Type.OBJECT, properties={"city": types.Schema(type=types.Type.STRING)}),
)])  # fmt: skip


def client_for(url: str) -> genai.Client:
    """google-genai pointed at ``url`` (``http_options.base_url``), with no retries (a miss must not retry)."""
    options = types.HttpOptions(base_url=url, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key=KEY, http_options=options)


def dumped(response: types.GenerateContentResponse) -> dict[str, Any]:
    """What the client got, without the HTTP headers (the replay adds its own)."""
    return response.model_dump(mode="json", exclude={"sdk_http_response"})


def automatic_calls(url: str) -> list[dict[str, Any]]:
    """``generate_content`` with a Python function as a tool: google-genai calls it and asks again."""
    config = types.GenerateContentConfig(tools=[get_weather], system_instruction="你是天气助手，回答要简短。")
    client = client_for(url)  # (held: a Client closes its connections when it is collected)
    response = client.models.generate_content(model=MODEL, contents="北京和上海天气怎么样？", config=config)
    return [dumped(response)]


def streamed_chat(url: str) -> list[dict[str, Any]]:
    """A chat whose replies stream (``send_message_stream``), the function calls answered by hand."""
    client = client_for(url)
    chat = client.chats.create(model=MODEL, config=types.GenerateContentConfig(tools=[WEATHER_TOOL]))
    chunks = [dumped(chunk) for chunk in chat.send_message_stream("北京和上海天气怎么样？")]
    calls = [part.function_call for content in chat.get_history()[1:] for part in content.parts or []
             if part.function_call is not None]  # fmt: skip
    answers = [types.Part.from_function_response(name=call.name or "",
                                                 response={"output": get_weather(**call.args or {})})
               for call in calls]  # fmt: skip
    chunks += [dumped(chunk) for chunk in chat.send_message_stream(answers)]
    return chunks


def count_then_generate(url: str) -> list[Any]:
    """``count_tokens`` (another route, recorded and replayed as it is), then one generation."""
    client = client_for(url)
    counted = client.models.count_tokens(model=MODEL, contents="你好").model_dump(exclude={"sdk_http_response"})
    return [counted, dumped(client.models.generate_content(model=MODEL, contents="你好"))]


def record_then_replay(tmp_path: Path, run: Callable[[str], Any], script: Any = SCRIPT,
                       ) -> tuple[Any, Any, list[list[dict[str, Any]]]]:  # fmt: skip
    with recording(script, tmp_path) as (upstream, proxy):
        recorded = run(proxy.url)
        assert upstream.requests, "the session went upstream"
    traces = [records for records in trace_records(tmp_path) if records[0].get("trace_id")]
    with replaying(tmp_path) as proxy:  # the upstream is stopped
        replayed = run(proxy.url)
        assert proxy.proxy.misses == []
    return recorded, replayed, traces


def assert_one_weather_session(traces: list[list[dict[str, Any]]], stream: bool) -> None:
    sessions = [records for records in traces if of_kind(records, "model_call")]
    assert len(sessions) == 1, "one session, one trace"
    records = sessions[0]
    calls = of_kind(records, "model_call")
    assert [(c["provider"], c["model"], c["stream"], c["stop_reason"]) for c in calls] == [
        ("gemini", MODEL, stream, "STOP")] * 2
    assert [c["stitched"] for c in calls] == ["new", "continuity"]
    assert [(t["name"], t["input"]) for t in of_kind(records, "tool_call")] == [
        ("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
    results = of_kind(records, "tool_result")
    assert [(r["content"], r["call_index"]) for r in results] == [("晴", 0), ("多云", 1)]
    assert all(c["usage"]["input_tokens"] > 0 and c["usage"]["output_tokens"] > 0 for c in calls)


def test_automatic_function_calling_is_one_trace_and_replays_equal(tmp_path: Path) -> None:
    recorded, replayed, traces = record_then_replay(tmp_path, automatic_calls)
    assert replayed == recorded
    assert recorded[0]["candidates"][0]["content"]["parts"][0]["text"] == "北京晴，上海多云。"
    assert len(recorded[0]["automatic_function_calling_history"]) == 3, "google-genai called the tool itself"
    assert_one_weather_session(traces, stream=False)
    (records,) = [r for r in traces if of_kind(r, "model_call")]
    assert of_kind(records, "system_message")[0]["content"] == "你是天气助手，回答要简短。"


def test_a_streamed_chat_is_one_trace_and_replays_equal(tmp_path: Path) -> None:
    recorded, replayed, traces = record_then_replay(tmp_path, streamed_chat)
    assert replayed == recorded
    assert len(recorded) > 4, "the replies came in pieces"
    assert_one_weather_session(traces, stream=True)
    calls = of_kind(next(r for r in traces if of_kind(r, "model_call")), "model_call")
    assert all(c["sse"].startswith("data: ") for c in calls)
    assert calls[0]["response"]["candidates"][0]["content"]["parts"][0]["text"] == "我查一下北京和上海的天气。", (
        "the stream was assembled: its text pieces joined")


def test_count_tokens_is_recorded_and_replayed_as_another_route(tmp_path: Path) -> None:
    recorded, replayed, _ = record_then_replay(tmp_path, count_then_generate, [text_reply("你好！")])
    assert replayed == recorded
    assert recorded[0]["total_tokens"] > 0


def test_the_key_never_reaches_disk_in_the_header_or_the_query(tmp_path: Path) -> None:
    query_key = "AIzaSyTracekitQueryKey9876543210zyxwvuts"
    with recording([text_reply("一"), text_reply("二")], tmp_path) as (upstream, proxy):
        automatic_calls(proxy.url)
        # The REST form the Gemini docs show: the key as ``?key=`` (no header).
        path = f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse&key={query_key}"
        # A key the proxy learnt from a request is scrubbed wherever else it turns up (here the prompt).
        body = {"contents": [{"role": "user", "parts": [{"text": f"你好，我的 key 是 {query_key}"}]}]}
        answer = httpx.post(proxy.url + path, json=body, timeout=30)
        assert answer.status_code == 200 and "二" in answer.text
        assert upstream.requests[-1].query["key"] == query_key, "the upstream got the key"
    written = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())
    assert written and KEY.encode() not in written and query_key.encode() not in written


def test_an_intercept_rewrites_a_function_response(tmp_path: Path) -> None:
    case = {"type": "tool_intercept", "intercept_tool": "get_weather",
            "inject_tool_result": {"is_error": True, "content": "Error: weather service unavailable"}}  # fmt: skip
    with recording(SCRIPT, tmp_path, case=case) as (upstream, proxy):
        automatic_calls(proxy.url)
        seen = upstream.requests[-1].body["contents"][-1]["parts"]
    assert [part["functionResponse"]["response"] for part in seen] == [
        {"error": "Error: weather service unavailable"}] * 2, "the model saw the injected error"
    (records,) = [r for r in trace_records(tmp_path) if of_kind(r, "model_call")]
    assert [(r["content"], r["is_error"], r["injected"]) for r in of_kind(records, "tool_result")] == [
        ("Error: weather service unavailable", True, True)] * 2
    assert [(i["tool"], i["original"]) for i in of_kind(records, "intercept")] == [
        ("get_weather", {"result": "晴"}), ("get_weather", {"result": "多云"})]
    with replaying(tmp_path, case=case) as proxy:
        automatic_calls(proxy.url)
        assert proxy.proxy.misses == []


@pytest.mark.parametrize("run", [automatic_calls, streamed_chat], ids=["json", "stream"])
def test_analyze_reads_a_gemini_session(tmp_path: Path, run: Callable[[str], Any]) -> None:
    with recording(SCRIPT, tmp_path / "rec") as (_, proxy):
        run(proxy.url)
    report = tmp_path / "analysis.json"
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "rec"), "--json", str(report)])
    assert result.exit_code == 0, result.output
    [trace] = json.loads(report.read_text(encoding="utf-8"))["traces"]
    assert [(c["name"], c["input"]) for c in trace["tool_calls"]] == [
        ("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
    assert trace["stats"]["llm_calls"] == 2 and trace["stats"]["tool_calls"] == 2


def test_an_exported_gemini_session_names_gcp_gemini_as_the_provider(tmp_path: Path) -> None:
    with recording(SCRIPT, tmp_path / "rec") as (_, proxy):
        automatic_calls(proxy.url)
    result = CliRunner().invoke(cli, ["export", "otel", str(tmp_path / "rec"), "--out", str(tmp_path / "spans.json")])
    assert result.exit_code == 0, result.output
    spans = json.loads((tmp_path / "spans.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    providers = {attribute["value"]["stringValue"] for span in spans for attribute in span["attributes"]
                 if attribute["key"] == "gen_ai.provider.name"}  # fmt: skip
    assert providers == {"gcp.gemini"}


def test_an_error_mid_stream_is_passed_on_and_recorded(tmp_path: Path) -> None:
    reply = text_reply("这个回答会在中途出错。").error_after(1, message="The model is overloaded", status=503)
    with recording([reply], tmp_path) as (_, proxy):
        path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        answer = httpx.post(proxy.url + path, json={"contents": [{"role": "user", "parts": [{"text": "你好"}]}]},
                            headers={"x-goog-api-key": "test-key-not-real"}, timeout=30)  # fmt: skip
    assert answer.status_code == 200 and '"status":"UNAVAILABLE"' in answer.text, "passed on as it came"
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["error"]["type"] == "UNAVAILABLE" and call["error"]["message"] == "The model is overloaded"
    assert call["stream"] is True and call["model"] == "gemini-2.5-flash"
