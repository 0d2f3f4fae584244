"""The scripted fake upstream (tracekit.testing), driven by the official anthropic and openai SDKs.

Every reply in these tests is written here; nothing is copied from recorded API traffic. The wire checks
compare against the event flow the Anthropic and OpenAI API references document.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import http.client
import json
import math
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from anthropic import beta_tool
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.testing import (
    FakeRequest,
    FakeUpstream,
    Provider,
    RedactedThinking,
    Reply,
    Script,
    ScriptError,
    Text,
    Thinking,
    ToolUse,
    Usage,
    by_turn,
    connection_reset,
    error_reply,
    fault,
    load_script,
    message_reply,
    text_reply,
    tool_use_reply,
)

USER: Any = [{"role": "user", "content": "北京明天天气怎么样？"}]
MODEL = "claude-test"


def anthropic_client(up: FakeUpstream, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=up.url, api_key="sk-test", **{"max_retries": 0, "timeout": 5, **options}
    )


def openai_client(up: FakeUpstream, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=up.openai_url, api_key="sk-test", **{"max_retries": 0, "timeout": 5, **options}
    )


def post(up: FakeUpstream, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    """A raw POST, to look at the bytes on the wire."""
    request = urllib.request.Request(
        up.url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def sse_events(raw: bytes) -> list[tuple[str | None, str]]:
    """(event name, data) per SSE frame."""
    events = []
    for frame in raw.decode().split("\n\n"):
        if not frame.strip():
            continue
        name, data = None, ""
        for line in frame.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = line[len("data: ") :]
        events.append((name, data))
    return events


# -- Anthropic: JSON and SSE ---------------------------------------------------------------------------------


def test_anthropic_create_returns_the_scripted_message_with_deterministic_ids_and_fake_usage() -> None:
    with FakeUpstream([text_reply("你好，世界！"), text_reply("再见")]) as up:
        client = anthropic_client(up)
        first = client.messages.create(model=MODEL, max_tokens=100, messages=USER)
        second = client.messages.create(model=MODEL, max_tokens=100, messages=USER)
    assert [block.model_dump(exclude_none=True) for block in first.content] == [
        {"type": "text", "text": "你好，世界！"}
    ]
    assert (first.id, second.id) == ("msg_fake_0001", "msg_fake_0002")
    assert first.model == MODEL and first.stop_reason == "end_turn"
    assert first.usage.output_tokens == math.ceil(len("你好，世界！") / 4)
    prompt = json.dumps(
        {"system": None, "tools": None, "messages": USER}, ensure_ascii=False, separators=(",", ":")
    )
    assert first.usage.input_tokens == math.ceil(len(prompt) / 4)
    assert up.requests[0].body["messages"] == USER
    headers = up.requests[0].headers  # this SDK version sends the key as a bearer token
    assert "sk-test" in headers.get("x-api-key", "") + headers.get("authorization", "")


def test_anthropic_stream_of_text_and_tool_use_assembles_to_the_same_message_as_json() -> None:
    reply = tool_use_reply(
        ToolUse("get_weather", {"city": "北京", "date": "2026-04-08"}, id="toolu_fixed"),
        text="我来查一下北京明天的天气。",
        chunk_size=4,
    )
    with FakeUpstream([reply, reply]) as up:
        client = anthropic_client(up)
        as_json = client.messages.create(model=MODEL, max_tokens=100, messages=USER)
        with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
            kinds = [event.type for event in stream]
            streamed = stream.get_final_message()
    expected = [
        {"type": "text", "text": "我来查一下北京明天的天气。"},
        {
            "type": "tool_use",
            "id": "toolu_fixed",
            "name": "get_weather",
            "input": {"city": "北京", "date": "2026-04-08"},
        },
    ]
    assert [
        b.model_dump(exclude_none=True, include={"type", "text", "id", "name", "input"})
        for b in streamed.content
    ] == expected
    assert [b.model_dump() for b in streamed.content] == [b.model_dump() for b in as_json.content]
    assert streamed.stop_reason == as_json.stop_reason == "tool_use"
    assert streamed.usage.output_tokens == as_json.usage.output_tokens
    assert "input_json" in kinds


def test_anthropic_sse_wire_shape() -> None:
    reply = message_reply(
        Thinking("先想一想。"), Text("好的"), ToolUse("search", {"q": "天气预报"}), chunk_size=2
    )
    with FakeUpstream([reply]) as up:
        status, headers, raw = post(up, "/v1/messages", {"model": MODEL, "stream": True, "messages": USER})
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["request-id"].startswith("req_")
    events = sse_events(raw)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names[1:3] == ["content_block_start", "ping"] and names.count("ping") == 1
    assert all(json.loads(data)["type"] == name for name, data in events)
    deltas = [json.loads(data)["delta"] for name, data in events if name == "content_block_delta"]
    thinking = [d for d in deltas if d["type"] in ("thinking_delta", "signature_delta")]
    assert [d["type"] for d in thinking][-1] == "signature_delta"
    assert "".join(d.get("thinking", "") for d in thinking) == "先想一想。" and len(thinking) == 4
    fragments = [d["partial_json"] for d in deltas if d["type"] == "input_json_delta"]
    assert fragments[0] == "" and len(fragments) >= 4
    assert json.loads("".join(fragments)) == {"q": "天气预报"}
    start = json.loads(events[0][1])["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["usage"]["output_tokens"] == 1
    final = json.loads(events[-2][1])
    assert final["delta"]["stop_reason"] == "tool_use" and final["usage"]["output_tokens"] > 1
    assert "好的" in raw.decode()  # UTF-8 on the wire, not \\u escapes


def test_anthropic_thinking_and_redacted_thinking_blocks_stream_and_assemble() -> None:
    reply = message_reply(
        Thinking("用户问天气，需要调用工具。", signature="c2lnbmF0dXJl"),
        RedactedThinking("EmwKAhgBEgy3va3pzix"),
        Text("明天晴。"),
        chunk_size=3,
    )
    with (
        FakeUpstream([reply]) as up,
        anthropic_client(up).messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream,
    ):
        message = stream.get_final_message()
    assert [b.model_dump(exclude_none=True) for b in message.content] == [
        {"type": "thinking", "thinking": "用户问天气，需要调用工具。", "signature": "c2lnbmF0dXJl"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
        {"type": "text", "text": "明天晴。"},
    ]


def test_anthropic_parallel_tool_calls_get_distinct_counter_ids() -> None:
    reply = tool_use_reply(
        [ToolUse("get_weather", {"city": "北京"}), ToolUse("get_weather", {"city": "上海"})]
    )
    with (
        FakeUpstream([reply]) as up,
        anthropic_client(up).messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream,
    ):
        message = stream.get_final_message()
    calls = [(b.id, b.input) for b in message.content if b.type == "tool_use"]
    assert calls == [("toolu_fake_0001", {"city": "北京"}), ("toolu_fake_0002", {"city": "上海"})]


# -- errors, retries, faults ---------------------------------------------------------------------------------


def test_anthropic_sdk_retries_529_when_told_to_and_the_fake_records_every_attempt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = [error_reply(529, should_retry=True, retry_after_ms=5)] * 2 + [text_reply("好了")]
    waits: list[float] = []
    chosen = anthropic._base_client.SyncAPIClient._calculate_retry_timeout

    def recorded(client: Any, *args: Any, **kwargs: Any) -> float:  # the wait the SDK chose before each retry
        waits.append(chosen(client, *args, **kwargs))
        return waits[-1]

    monkeypatch.setattr(anthropic._base_client.SyncAPIClient, "_calculate_retry_timeout", recorded)
    with FakeUpstream(script) as up:
        message = anthropic_client(up, max_retries=3).messages.create(
            model=MODEL, max_tokens=10, messages=USER
        )
    assert message.content[0].type == "text" and message.content[0].text == "好了"
    assert [request.retry_count for request in up.requests] == [0, 1, 2]
    assert waits == [0.005, 0.005]  # retry-after-ms was honoured instead of the SDK's own backoff (0.5 s and up)


def test_anthropic_sdk_does_not_retry_when_x_should_retry_is_false() -> None:
    with FakeUpstream([error_reply(529, should_retry=False), text_reply("never sent")]) as up:
        with pytest.raises(anthropic.APIStatusError) as caught:
            anthropic_client(up, max_retries=3).messages.create(model=MODEL, max_tokens=10, messages=USER)
        assert len(up.requests) == 1 and up.script.remaining == 1
    error = caught.value
    assert error.status_code == 529
    assert error.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": error.response.headers["request-id"],
    }
    assert error.response.headers["x-should-retry"] == "false"


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
        (429, "rate_limit_error"),
        (500, "api_error"),
    ],
)
def test_error_statuses_carry_the_provider_error_type(status: int, error_type: str) -> None:
    with FakeUpstream([error_reply(status, message="不行", should_retry=False, retry_after=1)] * 2) as up:
        code, headers, raw = post(up, "/v1/messages", {"model": MODEL, "messages": USER})
        openai_code, openai_headers, openai_raw = post(
            up, "/v1/chat/completions", {"model": "m", "messages": USER}
        )
    assert code == openai_code == status
    assert json.loads(raw)["error"] == {"type": error_type, "message": "不行"}
    assert set(json.loads(openai_raw)["error"]) == {"message", "type", "param", "code"}
    assert json.loads(openai_raw)["error"]["message"] == "不行"
    assert headers["retry-after"] == openai_headers["retry-after"] == "1"
    assert openai_headers["x-request-id"].startswith("req_")


def test_connection_reset_is_retried_by_the_sdk_and_raises_without_retries() -> None:
    with FakeUpstream([connection_reset(), text_reply("第二次成功"), fault("reset")]) as up:
        client = anthropic_client(up, max_retries=2)
        message = client.messages.create(model=MODEL, max_tokens=10, messages=USER)
        with pytest.raises(anthropic.APIConnectionError):
            anthropic_client(up).messages.create(model=MODEL, max_tokens=10, messages=USER)
    assert message.content[0].type == "text" and message.content[0].text == "第二次成功"
    assert [request.retry_count for request in up.requests] == [0, 1, 0]


def test_stream_cut_mid_event_makes_the_sdk_raise_and_sends_a_partial_frame() -> None:
    reply = text_reply("一段会被截断的很长的回答", chunk_size=2).cut_after(4)
    with FakeUpstream([reply, reply]) as up:
        with (
            pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)),
            anthropic_client(up).messages.stream(model=MODEL, max_tokens=10, messages=USER) as stream,
        ):
            stream.get_final_message()
        with pytest.raises(http.client.IncompleteRead) as caught:
            post(up, "/v1/messages", {"model": MODEL, "stream": True, "messages": USER})
    received = caught.value.partial
    assert received.count(b"\n\n") == 4  # four whole events (message_start, block start, ping, a delta)
    assert received.startswith(b"event: message_start") and not received.endswith(b"\n\n")
    assert len(up.requests) == 2 and up.script.remaining == 0


def test_cut_json_body_is_an_incomplete_response() -> None:
    with (
        FakeUpstream([text_reply("完整的 JSON 不会到达").cut_after(0)]) as up,
        pytest.raises(anthropic.APIConnectionError),
    ):
        anthropic_client(up).messages.create(model=MODEL, max_tokens=10, messages=USER)


def test_in_stream_error_event_makes_the_sdk_raise_api_status_error() -> None:
    with (
        FakeUpstream(
            [text_reply("半截", chunk_size=1).error_after(3, "overloaded_error", "Overloaded")]
        ) as up,
        pytest.raises(anthropic.APIStatusError) as caught,
        anthropic_client(up).messages.stream(model=MODEL, max_tokens=10, messages=USER) as stream,
    ):
        stream.get_final_message()
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_slow_first_byte_times_the_client_out_and_event_delays_space_the_stream() -> None:
    script = [
        text_reply("慢").delayed(first_byte=0.5),
        text_reply("一二三四五", chunk_size=1).delayed(per_event=0.03),
    ]
    with FakeUpstream(script) as up:
        with pytest.raises(anthropic.APITimeoutError):
            anthropic_client(up, timeout=0.1).messages.create(model=MODEL, max_tokens=10, messages=USER)
        started = time.monotonic()
        with anthropic_client(up).messages.stream(model=MODEL, max_tokens=10, messages=USER) as stream:
            text = stream.get_final_text()
        elapsed = time.monotonic() - started
    assert text == "一二三四五"
    assert elapsed >= 11 * 0.03 * 0.9  # 12 events, 11 gaps (asyncio may wake a timer a hair early)


# -- OpenAI -----------------------------------------------------------------------------------------------


def test_openai_create_with_tool_calls() -> None:
    reply = tool_use_reply(
        [ToolUse("get_weather", {"city": "北京"}), ToolUse("get_time", {"tz": "Asia/Shanghai"})]
    )
    with FakeUpstream([reply, text_reply("晴")]) as up:
        client = openai_client(up)
        completion = client.chat.completions.create(model="gpt-test", messages=USER)
        plain = client.chat.completions.create(model="gpt-test", messages=USER)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    assert [
        (c.id, c.function.name, json.loads(c.function.arguments))
        for c in choice.message.tool_calls or []
        if c.type == "function"
    ] == [
        ("call_fake_0001", "get_weather", {"city": "北京"}),
        ("call_fake_0002", "get_time", {"tz": "Asia/Shanghai"}),
    ]
    assert completion.id == "chatcmpl-fake0001" and completion.model == "gpt-test"
    assert plain.choices[0].message.content == "晴" and plain.choices[0].finish_reason == "stop"
    assert plain.usage is not None and plain.usage.completion_tokens == 1


def test_openai_stream_helper_assembles_parallel_tool_calls() -> None:
    reply = tool_use_reply(
        [ToolUse("get_weather", {"city": "北京", "days": 3}), ToolUse("get_weather", {"city": "上海"})],
        text="我查一下。",
        chunk_size=3,
    )
    with (
        FakeUpstream([reply]) as up,
        openai_client(up).chat.completions.stream(
            model="gpt-test", messages=USER, stream_options={"include_usage": True}
        ) as stream,
    ):
        completion = stream.get_final_completion()
    message = completion.choices[0].message
    assert message.content == "我查一下。"
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []] == [
        ("get_weather", {"city": "北京", "days": 3}),
        ("get_weather", {"city": "上海"}),
    ]
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.usage is not None and completion.usage.total_tokens > 0


def test_openai_chunks_on_the_wire() -> None:
    reply = tool_use_reply(ToolUse("lookup_city_id", {"name": "北京"}), chunk_size=4)
    with FakeUpstream([reply, reply]) as up:
        client = openai_client(up)
        chunks = list(client.chat.completions.create(model="gpt-test", messages=USER, stream=True))
        status, _, raw = post(
            up,
            "/v1/chat/completions",
            {"model": "m", "messages": USER, "stream": True, "stream_options": {"include_usage": True}},
        )
    assert chunks[0].choices[0].delta.role == "assistant"
    first_call = (chunks[0].choices[0].delta.tool_calls or [])[0]
    assert first_call.index == 0 and first_call.id and first_call.function and first_call.function.name
    fragments = [
        call.function.arguments or ""
        for chunk in chunks
        for choice in chunk.choices
        for call in choice.delta.tool_calls or []
        if call.function is not None
    ]
    arguments = "".join(fragments)
    assert len(fragments) >= 4 and fragments[0] == ""  # name first, then the arguments in pieces
    assert json.loads(arguments) == {"name": "北京"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls" and chunks[-1].usage is None
    events = sse_events(raw)
    assert status == 200 and all(name is None for name, _ in events) and events[-1][1] == "[DONE]"
    usage_chunk = json.loads(events[-2][1])
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["total_tokens"] > 0


def test_openai_errors_retries_and_in_stream_error() -> None:
    script: list[Reply] = [
        error_reply(429, should_retry=True, retry_after_ms=5),
        text_reply("ok"),
        error_reply(401, should_retry=False),
        text_reply("部分", chunk_size=1).error_after(2),
    ]
    with FakeUpstream(script) as up:
        client = openai_client(up, max_retries=2)
        assert client.chat.completions.create(model="m", messages=USER).choices[0].message.content == "ok"
        with pytest.raises(openai.AuthenticationError) as caught:
            client.chat.completions.create(model="m", messages=USER)
        with pytest.raises(openai.APIError) as in_stream:
            list(client.chat.completions.create(model="m", messages=USER, stream=True))
    assert caught.value.code == "invalid_api_key" and caught.value.type == "invalid_request_error"
    assert [request.retry_count for request in up.requests] == [0, 1, 0, 0]
    assert in_stream.value.message == "Overloaded"


# -- tool runner and thread continuations ------------------------------------------------------------------


def weather_tool(calls: list[str]) -> Any:
    @beta_tool
    def get_weather(city: str) -> str:
        """Get tomorrow's weather for a city.

        Args:
            city: the city name
        """
        calls.append(city)
        return f"{city}：晴，25°C"

    return get_weather


@pytest.mark.parametrize("stream", [False, True])
def test_tool_runner_threads_continue_from_the_previous_reply(stream: bool) -> None:
    calls: list[str] = []
    script = [
        tool_use_reply(ToolUse("get_weather", {"city": "北京"}), text="我查一下。"),
        text_reply("北京明天晴。"),
    ]
    with FakeUpstream(script) as up:
        runner = anthropic_client(up).beta.messages.tool_runner(
            model=MODEL,
            max_tokens=100,
            system="你是助手",
            tools=[weather_tool(calls)],
            messages=USER,
            stream=stream,
        )
        for item in runner:
            if stream:
                for _ in item:
                    pass
    first, second = up.requests
    assert calls == ["北京"]
    assert first.thread == {"type": "create"} and first.body["system"] == "你是助手"
    assert second.thread == {"type": "continue", "previous_message_id": "msg_fake_0001"}
    assert "system" not in second.body and "tools" not in second.body
    [new_message] = second.body["messages"]
    assert new_message["content"][0]["type"] == "tool_result"
    assert new_message["content"][0]["content"] == "北京：晴，25°C"
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user"]  # the thread's full history
    assert "message-threads" in second.headers["anthropic-beta"]


def test_tool_runner_without_thread_sends_the_full_history() -> None:
    calls: list[str] = []
    script = [tool_use_reply(ToolUse("get_weather", {"city": "上海"})), text_reply("上海明天晴。")]
    with FakeUpstream(script) as up:
        final = (
            anthropic_client(up)
            .beta.messages.tool_runner(
                model=MODEL, max_tokens=100, tools=[weather_tool(calls)], messages=USER, thread=False
            )
            .until_done()
        )
    assert final.content[0].type == "text" and final.content[0].text == "上海明天晴。"
    assert [request.thread for request in up.requests] == [None, None]
    assert len(up.requests[1].body["messages"]) == 3


def test_a_lost_thread_makes_the_tool_runner_replay_the_full_history() -> None:
    script = [tool_use_reply(ToolUse("get_weather", {"city": "北京"})), text_reply("晴")]
    up = FakeUpstream(script)
    calls: list[str] = []

    @beta_tool
    def get_weather(city: str) -> str:
        """Get tomorrow's weather for a city.

        Args:
            city: the city name
        """
        calls.append(city)
        up.threads.forget("msg_fake_0001")  # the server loses the thread while the tool runs
        return "晴"

    with up:
        anthropic_client(up).beta.messages.tool_runner(
            model=MODEL, max_tokens=100, tools=[get_weather], messages=USER
        ).until_done()
    assert [request.thread for request in up.requests] == [
        {"type": "create"},
        {"type": "continue", "previous_message_id": "msg_fake_0001"},
        {"type": "create"},
    ]
    assert len(up.requests[2].body["messages"]) == 3 and up.script.remaining == 0


def test_continuing_a_reply_twice_or_an_unknown_one_is_refused_like_the_api() -> None:
    with FakeUpstream([text_reply("一"), text_reply("二")]) as up:
        client = anthropic_client(up)
        first = client.beta.messages.create(
            model=MODEL, max_tokens=10, messages=USER, thread={"type": "create"}
        )
        follow_up: Any = [{"role": "user", "content": "然后呢？"}]

        def continue_from(message_id: str) -> Any:
            return client.beta.messages.create(
                model=MODEL,
                max_tokens=10,
                messages=follow_up,
                thread={"type": "continue", "previous_message_id": message_id},
            )

        continued = continue_from(first.id)
        with pytest.raises(anthropic.BadRequestError) as twice:
            continue_from(first.id)
        with pytest.raises(anthropic.NotFoundError) as unknown:
            continue_from("msg_unknown")
    assert continued.content[0].type == "text" and continued.content[0].text == "二"
    assert twice.value.error_code == "thread_already_continued"
    assert unknown.value.error_code == "thread_not_found"
    assert up.script.remaining == 0


# -- scripts and recording -----------------------------------------------------------------------------------


def test_script_function_sees_the_request_and_its_exceptions_become_500s() -> None:
    seen: list[FakeRequest] = []

    def answer(request: FakeRequest) -> Reply | str:
        seen.append(request)
        if request.provider == "openai":
            raise RuntimeError("boom")
        return f"{request.provider}:{request.model}:{len(request.messages)}"

    with FakeUpstream(answer) as up:
        message = anthropic_client(up).messages.create(model=MODEL, max_tokens=10, messages=USER)
        with pytest.raises(openai.InternalServerError) as caught:
            openai_client(up).chat.completions.create(model="gpt-x", messages=USER)
    assert message.content[0].type == "text" and message.content[0].text == f"anthropic:{MODEL}:1"
    assert [request.path for request in seen] == ["/v1/messages", "/v1/chat/completions"]
    assert "boom" in str(caught.value) and caught.value.response.headers["x-should-retry"] == "false"
    assert [type(error) for error in up.errors] == [RuntimeError]


def test_per_provider_queues_and_exhaustion() -> None:
    script = Script(["shared"], anthropic=["给 Anthropic"], openai=["for OpenAI"])
    with FakeUpstream(script) as up:
        client, oa = anthropic_client(up), openai_client(up)
        assert oa.chat.completions.create(model="m", messages=USER).choices[0].message.content == "for OpenAI"
        texts = [
            client.messages.create(model=MODEL, max_tokens=5, messages=USER).content[0] for _ in range(2)
        ]
        with pytest.raises(anthropic.InternalServerError) as caught:
            client.messages.create(model=MODEL, max_tokens=5, messages=USER)
    assert [t.text for t in texts if t.type == "text"] == ["给 Anthropic", "shared"]
    assert "no reply left" in caught.value.message and script.exhausted == 1
    assert [r.provider for r in up.requests_for("anthropic")] == ["anthropic"] * 3


def test_by_turn_keeps_concurrent_conversations_deterministic() -> None:
    replies = [tool_use_reply(ToolUse("get_weather", {"city": "北京"}, id="toolu_same")), text_reply("完成")]

    def conversation(up: FakeUpstream) -> list[str]:
        client = anthropic_client(up)
        first = client.messages.create(model=MODEL, max_tokens=10, messages=USER)
        history = [
            *USER,
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_same", "content": "晴"}],
            },
        ]
        second = client.messages.create(model=MODEL, max_tokens=10, messages=history)
        return [first.stop_reason or "", second.content[0].text if second.content[0].type == "text" else ""]

    with FakeUpstream(by_turn(replies)) as up, concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: conversation(up), range(8)))
    assert results == [["tool_use", "完成"]] * 8
    assert len(up.requests) == 16


def test_usage_override_and_model_override() -> None:
    reply = text_reply("hi", usage=Usage(input_tokens=100, cache_read_input_tokens=40), model="claude-fixed")
    with FakeUpstream([reply, reply]) as up:
        message = anthropic_client(up).messages.create(model=MODEL, max_tokens=5, messages=USER)
        completion = openai_client(up).chat.completions.create(model="m", messages=USER)
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens) == (100, 40)
    assert message.model == completion.model == "claude-fixed"
    assert completion.usage is not None and completion.usage.prompt_tokens == 140
    assert (
        completion.usage.prompt_tokens_details and completion.usage.prompt_tokens_details.cached_tokens == 40
    )


def test_health_unknown_routes_and_bad_json() -> None:
    with FakeUpstream(text_reply("unused")) as up:
        with urllib.request.urlopen(up.url + "/_tracekit/health", timeout=5) as response:
            assert response.status == 200
        status, _, raw = post(up, "/v1/complete", {})
        request = urllib.request.Request(up.url + "/v1/messages", data=b"{not json", method="POST")
        with pytest.raises(urllib.error.HTTPError) as bad:
            urllib.request.urlopen(request, timeout=5)
    assert status == 404 and json.loads(raw)["error"]["type"] == "not_found_error"
    assert bad.value.code == 400
    assert [(r.path, r.body) for r in up.requests] == [("/v1/complete", {}), ("/v1/messages", None)]
    assert up.script.remaining == 1


def test_runs_inside_an_existing_event_loop_with_async_clients() -> None:
    async def scenario() -> tuple[str, str]:
        async with FakeUpstream([text_reply("异步"), text_reply("流式异步")]) as up:
            client = anthropic.AsyncAnthropic(base_url=up.url, api_key="x", max_retries=0)
            message = await client.messages.create(model=MODEL, max_tokens=5, messages=USER)
            async with client.messages.stream(model=MODEL, max_tokens=5, messages=USER) as stream:
                streamed = await stream.get_final_text()
        block = message.content[0]
        return (block.text if block.type == "text" else ""), streamed

    assert asyncio.run(scenario()) == ("异步", "流式异步")


# -- script files and the command line ---------------------------------------------------------------------

SCRIPT_YAML = """\
# made by hand for this test: one entry of each kind
- 你好
- text: 我查一下。
  tool_use: [{name: get_weather, input: {city: 北京}, id: toolu_a}, {name: get_weather, input: {city: 上海}}]
- thinking: {thinking: 想一想, signature: c2ln}
  text: 好的
  stop_reason: max_tokens
- content: [{type: redacted_thinking, data: opaque}, {type: text, text: hi}]
  usage: {input_tokens: 7}
  chunk_size: 2
- {error: {status: 529, should_retry: true, retry_after_ms: 20}, delay: {first_byte: 0.01}}
- fault: reset
- {text: 很长的回答, fault: {kind: cut, after_events: 3}, delay: {first_byte: 0.5, per_event: 0.01}}
- {text: 半截, fault: {kind: error, after_events: 2, type: api_error, message: 坏了, status: 500}}
"""


def next_replies(script: Script, count: int, provider: Provider = "anthropic") -> list[Reply]:
    request = FakeRequest(index=0, method="POST", path="/", headers={}, body={}, raw=b"", provider=provider)
    return [script.next_reply(request) for _ in range(count)]


def test_load_script_reads_every_kind_of_yaml_entry(tmp_path: Any) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(SCRIPT_YAML, encoding="utf-8")
    replies = next_replies(load_script(path), 8)
    assert replies[:6] == [
        text_reply("你好"),
        tool_use_reply(
            [ToolUse("get_weather", {"city": "北京"}, "toolu_a"), ToolUse("get_weather", {"city": "上海"})],
            text="我查一下。",
        ),
        text_reply("好的", thinking=Thinking("想一想", "c2ln"), stop_reason="max_tokens"),
        message_reply(RedactedThinking("opaque"), Text("hi"), usage=Usage(input_tokens=7), chunk_size=2),
        dataclasses.replace(error_reply(529, should_retry=True, retry_after_ms=20), first_byte_delay=0.01),
        connection_reset(),
    ]
    assert replies[6] == text_reply("很长的回答").delayed(first_byte=0.5, per_event=0.01).cut_after(3)
    assert replies[7] == text_reply("半截").error_after(2, "api_error", "坏了", status=500)


def test_load_script_json_with_queues_per_provider(tmp_path: Any) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps({"anthropic": ["给 Anthropic"], "openai": [{"text": "for OpenAI"}]}), encoding="utf-8"
    )
    script = load_script(path)
    assert next_replies(script, 1, "openai") == [text_reply("for OpenAI")]
    assert next_replies(script, 1, "anthropic") == [text_reply("给 Anthropic")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- 你好\n- {text: hi, colour: red}\n", "script.yaml:2: replies entry 1: field 'colour'"),
        ("- 你好\n- tool_use: [{input: {}}]\n", "script.yaml:2: replies entry 1: field 'tool_use"),
        (
            "- {error: {status: 500}, text: hi}\n",
            "script.yaml:1: replies entry 0: 'error' cannot be combined",
        ),
        ("anthropic:\n  - {}\n", "script.yaml:2: anthropic entry 0: a reply needs"),
        ("whatever: []\n", "unknown top-level keys ['whatever']"),
        ("- [unclosed\n", "not valid YAML"),
    ],
)
def test_script_file_errors_name_the_file_line_and_field(tmp_path: Any, text: str, expected: str) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    assert expected in str(caught.value)


def test_cli_rejects_a_bad_script_with_usage_exit_status(tmp_path: Any) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("- {txt: typo}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["fake-upstream", "--script", str(path), "--port", "0"])
    assert result.exit_code == 2 and "bad.yaml:1" in result.output and "txt" in result.output


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_cli_serves_the_script_and_exits_0_on_signal(tmp_path: Any, signum: int) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(SCRIPT_YAML, encoding="utf-8")
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from tracekit.cli.main import cli; cli()",
            "fake-upstream",
            "--script",
            str(path),
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        client = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0, timeout=5)
        message = client.messages.create(model=MODEL, max_tokens=5, messages=USER)
        with client.messages.stream(model=MODEL, max_tokens=5, messages=USER) as stream:
            streamed = stream.get_final_message()
        process.send_signal(signum)
        assert process.wait(timeout=5) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert message.content[0].type == "text" and message.content[0].text == "你好"
    assert [b.name for b in streamed.content if b.type == "tool_use"] == ["get_weather", "get_weather"]
    assert process.stderr is not None and "served 2 requests" in process.stderr.read()
