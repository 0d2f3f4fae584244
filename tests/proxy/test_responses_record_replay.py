"""The OpenAI Responses API through ``tracekit record`` to the fake upstream, then through ``tracekit replay``
with the upstream gone: ``client.responses.create`` (JSON and SSE), the ``responses.stream()`` helper, a
``previous_response_id`` chain, SDK retries, JSON <-> SSE in replay, intercepts, and analyze.

Every session calls ``get_weather`` three times: once, then twice in one turn (parallel calls), then
answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.testing import ToolUse, by_turn, error_reply, text_reply, tool_use_reply

from .helpers import of_kind, recording, replaying, trace_records

WEATHER = {"北京": "晴", "上海": "多云", "广州": "雨"}
FINAL = "北京晴，上海多云，广州有雨。"
TOOLS: list[Any] = [{"type": "function", "name": "get_weather", "description": "The weather of a city.",
                     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]  # fmt: skip


def weather_script(*first: Any) -> Any:
    """Three turns by the conversation's turn; ``first`` replies are answered before them (retries)."""
    turns = by_turn([
        tool_use_reply(ToolUse("get_weather", {"city": "北京"}), text="我查一下。", thinking="先查北京"),
        tool_use_reply([ToolUse("get_weather", {"city": "上海"}), ToolUse("get_weather", {"city": "广州"})]),
        text_reply(FINAL),
    ])  # fmt: skip
    pending = list(first)

    def answer(request: Any) -> Any:
        return pending.pop(0) if pending else turns(request)

    return answer


def call_outputs(output: list[Any]) -> list[dict[str, Any]]:
    """The agent's tool: one ``function_call_output`` per ``function_call`` of a response."""
    calls = [item for item in output if item.type == "function_call"]
    return [{"type": "function_call_output", "call_id": call.call_id,
             "output": WEATHER[json.loads(call.arguments)["city"]]} for call in calls]  # fmt: skip


def full_history_loop(client: openai.OpenAI, mode: str) -> list[dict[str, Any]]:
    """An agent that re-sends the whole input each turn; ``mode`` is create, create-stream or helper."""
    items: list[Any] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    results = []
    for _ in range(5):
        kwargs: dict[str, Any] = {"model": "gpt-test", "instructions": "你是天气助手。", "input": items,
                                  "tools": TOOLS}  # fmt: skip
        if mode == "helper":
            with client.responses.stream(**kwargs) as stream:
                response = stream.get_final_response()
        elif mode == "create-stream":
            events = list(client.responses.create(stream=True, **kwargs))
            response = next(e.response for e in events if e.type == "response.completed")
        else:
            response = client.responses.create(**kwargs)
        results.append(response.to_dict(mode="json", exclude_none=True))
        outputs = call_outputs(response.output)
        if not outputs:
            return results
        items += [item.to_dict(mode="json", exclude_none=True) for item in response.output] + outputs
    return results


def chained_loop(client: openai.OpenAI, stream: bool) -> list[dict[str, Any]]:
    """An agent that sends only the new items, naming the previous response (``previous_response_id``)."""
    new: list[Any] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    previous = None
    results = []
    for _ in range(5):
        kwargs: dict[str, Any] = {"model": "gpt-test", "input": new, "tools": TOOLS}
        if previous is not None:
            kwargs["previous_response_id"] = previous
        if stream:
            with client.responses.stream(**kwargs) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**kwargs)
        results.append(response.to_dict(mode="json", exclude_none=True))
        new, previous = call_outputs(response.output), response.id
        if not new:
            return results
    return results


def record_then_replay(tmp_path: Path, script: Any, run: Callable[[openai.OpenAI], Any], retries: int = 0) -> Any:
    with recording(script, tmp_path) as (upstream, proxy):
        recorded = run(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=retries))
        assert upstream.requests_for("openai_responses"), "the session went upstream"
    traces = trace_records(tmp_path)
    with replaying(tmp_path) as proxy:
        replayed = run(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=retries))
        assert proxy.proxy.misses == []
    return recorded, replayed, traces


def assert_weather_session(records: list[dict[str, Any]]) -> None:
    """One trace with the three calls, their arguments and results, and the final answer."""
    calls = of_kind(records, "model_call")
    assert len(calls) == 3 and {c["provider"] for c in calls} == {"openai_responses"}
    assert [(c["name"], c["input"]) for c in of_kind(records, "tool_call")] == [
        ("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"}), ("get_weather", {"city": "广州"})]
    assert [(r["call_index"], r["content"]) for r in of_kind(records, "tool_result")] == [
        (0, "晴"), (1, "多云"), (2, "雨")]
    assert [m["message_index"] for m in of_kind(records, "tool_call")][1:] == [3, 3], "two calls in one turn"
    answers = of_kind(records, "assistant_message")
    assert answers[-1]["content"] == [{"type": "text", "text": FINAL}]
    assert answers[0]["content"][0]["type"] == "thinking" and answers[0]["content"][0]["thinking"] == "先查北京"
    assert all(c["usage"]["input_tokens"] > 0 and c["usage"]["output_tokens"] > 0 for c in calls)


@pytest.mark.parametrize("mode", ["create", "create-stream", "helper"])
def test_full_history_session_is_one_trace_and_replays_equal(tmp_path: Path, mode: str) -> None:
    recorded, replayed, traces = record_then_replay(
        tmp_path, weather_script(), lambda client: full_history_loop(client, mode))
    assert replayed == recorded
    assert recorded[-1]["output"][0]["content"][0]["text"] == FINAL
    (records,) = traces
    assert_weather_session(records)
    calls = of_kind(records, "model_call")
    assert [c["stitched"] for c in calls] == ["new", "continuity", "continuity"]
    assert all(c["stream"] is (mode != "create") for c in calls)
    if mode != "create":
        assert all(c["sse"].startswith("event: response.created") for c in calls)
        assert calls[1]["response"]["output"][1]["arguments"] == '{"city": "广州"}', "the stream was assembled"
    assert of_kind(records, "system_message")[0]["content"] == "你是天气助手。"


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_previous_response_id_chain_is_one_trace_and_replays_with_the_same_ids(tmp_path: Path, stream: bool) -> None:
    recorded, replayed, traces = record_then_replay(
        tmp_path, weather_script(), lambda client: chained_loop(client, stream))
    assert replayed == recorded, "a replayed response keeps its id, so the chain replays whole"
    (records,) = traces
    assert_weather_session(records)
    calls = of_kind(records, "model_call")
    assert [c["stitched"] for c in calls] == ["new", "thread", "thread"]
    assert [c["request"].get("previous_response_id") for c in calls] == [None, *(r["id"] for r in recorded[:2])]
    assert [len(c["request"]["input"]) for c in calls] == [1, 1, 2], "only new items were sent"


def conversation_loop(client: openai.OpenAI) -> list[dict[str, Any]]:
    """An agent on a kept conversation (``client.conversations.create()``, then ``conversation=``): each
    request sends only its new items, the server adds the conversation's."""
    conversation = client.conversations.create()
    new: list[Any] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    results = []
    for _ in range(5):
        response = client.responses.create(model="gpt-test", input=new, tools=TOOLS, conversation=conversation.id)
        results.append(response.to_dict(mode="json", exclude_none=True))
        new = call_outputs(response.output)
        if not new:
            return results
    return results


def test_a_kept_conversation_is_one_trace_and_replays(tmp_path: Path) -> None:
    recorded, replayed, traces = record_then_replay(tmp_path, weather_script(), conversation_loop)
    assert replayed == recorded
    [records] = [trace for trace in traces if of_kind(trace, "model_call")]
    assert_weather_session(records)
    calls = of_kind(records, "model_call")
    assert [c["stitched"] for c in calls] == ["new", "conversation", "conversation"]
    assert len({c["request"]["conversation"] for c in calls}) == 1
    assert [len(c["request"]["input"]) for c in calls] == [1, 1, 2], "only new items were sent"


def test_sdk_retries_are_attempts_of_one_turn(tmp_path: Path) -> None:
    script = weather_script(error_reply(529, should_retry=True, retry_after_ms=1))
    recorded, replayed, traces = record_then_replay(
        tmp_path, script, lambda client: full_history_loop(client, "create"), retries=2)
    assert replayed == recorded
    (records,) = traces
    assert_weather_session(records)
    assert [c["attempts"] for c in of_kind(records, "model_call")] == [2, 1, 1]
    assert of_kind(records, "error")[0]["status"] == 529


def test_a_json_recording_answers_a_stream_and_the_other_way_round(tmp_path: Path) -> None:
    json_dir, sse_dir = tmp_path / "json", tmp_path / "sse"
    for folder, mode in ((json_dir, "create"), (sse_dir, "helper")):
        with recording(weather_script(), folder) as (_, proxy):
            full_history_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0), mode)
    with replaying(json_dir) as proxy:
        as_stream = full_history_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0), "helper")
        assert proxy.proxy.misses == []
    with replaying(sse_dir) as proxy:
        as_json = full_history_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0), "create")
        assert proxy.proxy.misses == []
    assert as_stream == as_json
    assert as_json[-1]["output"][0]["content"][0]["text"] == FINAL


def test_a_replay_miss_names_the_nearest_recording(tmp_path: Path) -> None:
    with recording(weather_script(), tmp_path) as (_, proxy):
        full_history_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0), "create")
    with replaying(tmp_path) as proxy:
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=3)
        with pytest.raises(openai.NotFoundError) as caught:
            client.responses.create(model="gpt-test", instructions="你是天气助手。", tools=TOOLS,
                                    input=[{"role": "user", "content": "深圳天气怎么样？"}])  # fmt: skip
    message = str(caught.value)
    assert "Nearest recorded request" in message and "深圳" in message
    assert len(proxy.proxy.misses) == 1, "x-should-retry: false"


def test_intercepts_rewrite_function_call_outputs(tmp_path: Path) -> None:
    case = {"type": "tool_intercept", "intercept_tool": "get_weather",
            "inject_tool_result": {"is_error": True, "content": "Error: weather service unavailable"}}  # fmt: skip
    with recording(weather_script(), tmp_path, case=case) as (upstream, proxy):
        full_history_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0), "create")
        seen = upstream.requests_for("openai_responses")[-1].body["input"]
    assert [i["output"] for i in seen if i.get("type") == "function_call_output"] == [
        "Error: weather service unavailable"] * 3, "the model saw the injected result"
    (records,) = trace_records(tmp_path)
    # The wire has no is_error (as in chat completions): the result records what the model saw, the intercept
    # record keeps the flag.
    assert [(r["content"], r["injected"]) for r in of_kind(records, "tool_result")] == [
        ("Error: weather service unavailable", True)] * 3
    assert [(i["tool"], i["original"], i["is_error"]) for i in of_kind(records, "intercept")] == [
        ("get_weather", "晴", True), ("get_weather", "多云", True), ("get_weather", "雨", True)]
    with replaying(tmp_path, case=case) as proxy:
        full_history_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0), "create")
        assert proxy.proxy.misses == []


def test_analyze_reports_a_recorded_responses_session(tmp_path: Path) -> None:
    with recording(weather_script(), tmp_path / "rec") as (_, proxy):
        full_history_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0), "helper")
    report = tmp_path / "analysis.json"
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "rec"), "--json", str(report)])
    assert result.exit_code == 0, result.output
    [trace] = json.loads(report.read_text(encoding="utf-8"))["traces"]
    assert [(c["name"], c["input"]) for c in trace["tool_calls"]] == [
        ("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"}), ("get_weather", {"city": "广州"})]
    assert trace["stats"]["llm_calls"] == 3 and trace["stats"]["tool_calls"] == 3
    assert trace["stats"]["input_tokens"] > 0 and trace["stats"]["output_tokens"] > 0


def test_an_exported_responses_session_names_openai_as_the_provider(tmp_path: Path) -> None:
    # The semantic conventions' gen_ai.provider.name has no value for one API of a provider: the Responses
    # API's spans say "openai", as the official instrumentation's do.
    with recording(weather_script(), tmp_path / "rec") as (_, proxy):
        full_history_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0), "create")
    result = CliRunner().invoke(cli, ["export", "otel", str(tmp_path / "rec"), "--out", str(tmp_path / "spans.json")])
    assert result.exit_code == 0, result.output
    spans = json.loads((tmp_path / "spans.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    providers = {attribute["value"]["stringValue"] for span in spans for attribute in span["attributes"]
                 if attribute["key"] == "gen_ai.provider.name"}  # fmt: skip
    assert providers == {"openai"}
    assert sum(span["name"].startswith("chat ") for span in spans) >= 2
