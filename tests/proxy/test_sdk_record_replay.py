"""The official SDKs through ``tracekit record`` to the fake upstream, then the same sessions through
``tracekit replay`` with the upstream gone: the SDKs must get equal results both times."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from anthropic import beta_tool

from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply

from .helpers import kinds, of_kind, recording, replaying, trace_records

WEATHER_SCRIPT = by_turn([
    tool_use_reply(ToolUse("get_weather", {"city": "北京"}), text="我查一下。"),
    tool_use_reply([ToolUse("get_weather", {"city": "上海"}), ToolUse("get_weather", {"city": "广州"})]),
    text_reply("北京晴，上海多云，广州有雨。"),
])  # fmt: skip


@beta_tool
def get_weather(city: str) -> str:
    """The weather of a city."""
    return {"北京": "晴", "上海": "多云", "广州": "雨"}.get(city, "未知")


def anthropic_loop(client: anthropic.Anthropic, stream: bool) -> list[dict[str, Any]]:
    """A hand-written agent loop (create or stream), returning every response as a dict."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    results = []
    for _ in range(5):
        kwargs: dict[str, Any] = {"model": "claude-test", "max_tokens": 256, "messages": messages,
                                  "tools": [get_weather.to_dict()]}  # fmt: skip
        if stream:
            with client.messages.stream(**kwargs) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kwargs)
        results.append(message.model_dump())
        if message.stop_reason != "tool_use":
            break
        messages.append({"role": "assistant", "content": message.content})
        outputs = [{"type": "tool_result", "tool_use_id": block.id, "content": get_weather(**block.input)}
                   for block in message.content if block.type == "tool_use"]  # fmt: skip
        messages.append({"role": "user", "content": outputs})
    return results


def tool_runner(client: anthropic.Anthropic, thread: bool) -> list[dict[str, Any]]:
    """The anthropic SDK's beta tool runner (threads by default: only new messages sent each turn)."""
    options: dict[str, Any] = {} if thread else {"thread": False}
    runner = client.beta.messages.tool_runner(
        model="claude-test", max_tokens=256, tools=[get_weather],
        messages=[{"role": "user", "content": "北京、上海、广州天气怎么样？"}], **options,
    )  # fmt: skip
    return [message.model_dump() for message in runner]


OPENAI_TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "weather",
                 "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]  # fmt: skip


def openai_loop(client: openai.OpenAI, stream: bool) -> list[Any]:
    """A hand-written chat-completions agent loop (create, or stream=True chunks assembled by the SDK)."""
    messages: list[Any] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    results: list[Any] = []
    for _ in range(5):
        if stream:
            with client.chat.completions.stream(model="gpt-test", messages=messages, tools=OPENAI_TOOLS) as events:
                for _event in events:
                    pass
                completion = events.get_final_completion()
        else:
            completion = client.chat.completions.create(model="gpt-test", messages=messages, tools=OPENAI_TOOLS)
        message = completion.choices[0].message
        results.append(completion.model_dump(exclude={"created"}))
        if not message.tool_calls:
            break
        messages.append(message)
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": get_weather(**__import__("json").loads(call.function.arguments))})
    return results


def _record_then_replay(tmp_path: Path, run: Callable[[str], Any]) -> tuple[Any, Any, list[list[dict[str, Any]]]]:
    with recording(WEATHER_SCRIPT, tmp_path) as (upstream, proxy):
        recorded = run(proxy.url)
        assert upstream.requests, "the session went upstream"
    traces = trace_records(tmp_path)
    with replaying(tmp_path) as proxy:
        replayed = run(proxy.url)
        assert proxy.proxy.misses == []
    return recorded, replayed, traces


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_anthropic_loop_records_one_trace_and_replays_equal(tmp_path: Path, stream: bool) -> None:
    recorded, replayed, traces = _record_then_replay(
        tmp_path, lambda url: anthropic_loop(anthropic.Anthropic(base_url=url, api_key="k", max_retries=0), stream)
    )
    assert replayed == recorded
    assert [r["stop_reason"] for r in recorded] == ["tool_use", "tool_use", "end_turn"]
    (records,) = traces
    calls = of_kind(records, "model_call")
    assert [c["stitched"] for c in calls] == ["new", "continuity", "continuity"]
    assert all(c["stream"] is stream for c in calls)
    assert [c["input"]["city"] for c in of_kind(records, "tool_call")] == ["北京", "上海", "广州"]
    assert [r["content"] for r in of_kind(records, "tool_result")] == ["晴", "多云", "雨"]
    if stream:
        assert all(c["sse"].startswith("event: message_start") and c["ttft_ms"] >= 0 for c in calls)
        assert all(len(c["event_offsets_ms"]) == c["sse"].count("\n\n") for c in calls)
        assert calls[0]["response"]["content"][1]["input"] == {"city": "北京"}, "the stream was assembled"


@pytest.mark.parametrize("thread", [True, False], ids=["thread", "full-history"])
def test_anthropic_tool_runner_is_one_session_and_replays_equal(tmp_path: Path, thread: bool) -> None:
    recorded, replayed, traces = _record_then_replay(
        tmp_path, lambda url: tool_runner(anthropic.Anthropic(base_url=url, api_key="k", max_retries=0), thread)
    )
    assert replayed == recorded
    assert recorded[-1]["content"][0]["text"] == "北京晴，上海多云，广州有雨。"
    (records,) = traces
    calls = of_kind(records, "model_call")
    assert [c["stitched"] for c in calls] == ["new", *(["thread" if thread else "continuity"] * 2)]
    if thread:
        assert [len(c["request"]["messages"]) for c in calls] == [1, 1, 1], "only new messages were sent"
    # The conversation is rebuilt in full either way: 6 messages, 3 tool calls with results.
    assert [r["message_index"] for r in of_kind(records, "assistant_message")] == [1, 3, 5]
    assert len(of_kind(records, "tool_result")) == 3
    assert kinds(records)[0] == "header"


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_openai_loop_with_tool_calls_replays_equal(tmp_path: Path, stream: bool) -> None:
    recorded, replayed, traces = _record_then_replay(
        tmp_path, lambda url: openai_loop(openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0), stream)
    )
    assert replayed == recorded
    assert recorded[-1]["choices"][0]["message"]["content"] == "北京晴，上海多云，广州有雨。"
    (records,) = traces
    assert [c["stitched"] for c in of_kind(records, "model_call")] == ["new", "continuity", "continuity"]
    assert [c["name"] for c in of_kind(records, "tool_call")] == ["get_weather"] * 3
    assert [r["call_index"] for r in of_kind(records, "tool_result")] == [0, 1, 2]


def test_a_json_recording_answers_a_stream_and_the_other_way_round(tmp_path: Path) -> None:
    json_dir, sse_dir = tmp_path / "json", tmp_path / "sse"
    for folder, stream in ((json_dir, False), (sse_dir, True)):
        with recording(WEATHER_SCRIPT, folder) as (_, proxy):
            anthropic_loop(anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0), stream)
    with replaying(json_dir) as proxy:
        as_stream = anthropic_loop(anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0), True)
    with replaying(sse_dir) as proxy:
        as_json = anthropic_loop(anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0), False)
    # Both fake upstream instances count ids from 1, so both recordings hold the same messages.
    assert as_stream == as_json
    assert [r["stop_reason"] for r in as_json] == ["tool_use", "tool_use", "end_turn"]
