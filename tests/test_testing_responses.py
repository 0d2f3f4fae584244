"""The fake upstream speaks the OpenAI Responses API: the openai SDK as the client, JSON and SSE, function
calls, reasoning, ``previous_response_id`` chains, errors, retries, cut streams and script files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from tracekit.testing import (
    FakeUpstream,
    Script,
    Thinking,
    ToolUse,
    by_turn,
    error_reply,
    load_script,
    text_reply,
    tool_use_reply,
)

TOOLS: list[Any] = [{"type": "function", "name": "get_weather", "description": "weather",
                     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]  # fmt: skip


def client(up: FakeUpstream, retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=up.openai_url, api_key="k", max_retries=retries)


def test_create_returns_function_calls_reasoning_and_fake_usage() -> None:
    reply = tool_use_reply([ToolUse("get_weather", {"city": "北京"}), ToolUse("get_weather", {"city": "上海"})],
                           text="我查一下。", thinking=Thinking("先查北京"))  # fmt: skip
    with FakeUpstream([reply]) as up:
        response = client(up).responses.create(model="gpt-test", input="天气？", tools=TOOLS,
                                               include=["reasoning.encrypted_content"])  # fmt: skip
    assert [item.type for item in response.output] == ["reasoning", "message", "function_call", "function_call"]
    assert response.id == "resp_fake_0001" and response.status == "completed"
    assert response.output_text == "我查一下。"
    calls = [item for item in response.output if item.type == "function_call"]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("call_fake_0001", "get_weather", '{"city": "北京"}'), ("call_fake_0002", "get_weather", '{"city": "上海"}')]
    reasoning = response.output[0]
    assert reasoning.type == "reasoning" and reasoning.summary[0].text == "先查北京"
    assert reasoning.encrypted_content, "asked for with include"
    assert response.usage is not None and response.usage.output_tokens_details.reasoning_tokens > 0
    assert response.tools[0].type == "function", "request fields are echoed"
    assert up.requests[0].provider == "openai_responses"


def test_stream_helper_assembles_the_same_response_as_json() -> None:
    reply = tool_use_reply(ToolUse("get_weather", {"city": "广州"}), text="好的，", thinking="想", chunk_size=2)
    with FakeUpstream([reply]) as up, client(up).responses.stream(model="gpt-test", input="天", tools=TOOLS) as stream:
        kinds = [event.type for event in stream]
        streamed = stream.get_final_response()
    with FakeUpstream([reply]) as up:
        created = client(up).responses.create(model="gpt-test", input="天", tools=TOOLS)
    assert streamed.to_dict(exclude_none=True) == created.to_dict(exclude_none=True), "parsed fields are None"
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert kinds.count("response.output_text.delta") == 2
    assert "response.reasoning_summary_text.delta" in kinds
    assert kinds.count("response.function_call_arguments.delta") >= 3


def test_max_tokens_is_an_incomplete_response() -> None:
    with FakeUpstream([text_reply("截断", stop_reason="max_tokens")] * 2) as up:
        response = client(up).responses.create(model="gpt-test", input="hi")
        with client(up).responses.stream(model="gpt-test", input="hi") as stream:
            kinds = [event.type for event in stream]
    assert response.status == "incomplete" and response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert kinds[-1] == "response.incomplete"


def test_previous_response_id_continues_the_stored_conversation() -> None:
    replies = by_turn([tool_use_reply(ToolUse("get_weather", {"city": "北京"})), text_reply("北京晴。")])
    with FakeUpstream(replies) as up:
        api = client(up)
        first = api.responses.create(model="gpt-test", input="北京天气？", tools=TOOLS)
        call = first.output[0]
        assert call.type == "function_call"
        second = api.responses.create(model="gpt-test", previous_response_id=first.id, tools=TOOLS,
                                      input=[{"type": "function_call_output", "call_id": call.call_id, "output": "晴"}])
        branch = api.responses.create(model="gpt-test", previous_response_id=first.id, tools=TOOLS,
                                      input=[{"type": "function_call_output", "call_id": call.call_id, "output": "雨"}])
    assert second.output_text == "北京晴。" and branch.output_text == "北京晴。", "a response can be continued twice"
    seen = up.requests[1].messages
    assert [item.get("type", "message") for item in seen] == ["message", "function_call", "function_call_output"]
    assert up.requests[1].assistant_turns == 1


def test_unknown_or_unstored_previous_response_is_a_404() -> None:
    with FakeUpstream(["一", "二"]) as up:
        api = client(up, retries=2)
        first = api.responses.create(model="gpt-test", input="hi", store=False)
        with pytest.raises(openai.NotFoundError) as caught:
            api.responses.create(model="gpt-test", input="again", previous_response_id=first.id)
        up.responses.forget(first.id)
    assert caught.value.code == "previous_response_not_found"
    assert caught.value.param == "previous_response_id"
    assert len(up.requests) == 2, "x-should-retry: false"


def test_errors_retries_and_broken_streams() -> None:
    script: list[Any] = [
        error_reply(429, should_retry=True, retry_after_ms=1),
        text_reply("重试后成功"),
        text_reply("半截", chunk_size=1).error_after(4, "overloaded_error", "Overloaded"),
        text_reply("一段会被截断的很长的回答", chunk_size=2).cut_after(5),
    ]
    with FakeUpstream(script) as up:
        api = client(up, retries=1)
        assert api.responses.create(model="gpt-test", input="hi").output_text == "重试后成功"
        assert [r.retry_count for r in up.requests] == [0, 1]
        with pytest.raises(openai.APIError, match="Overloaded"), api.responses.stream(model="m", input="hi") as stream:
            list(stream)
        with pytest.raises(openai.APIConnectionError), api.responses.stream(model="m", input="hi") as stream:
            list(stream)


def test_script_files_have_a_responses_queue(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text("openai_responses:\n  - 来自 Responses 队列\nopenai:\n  - 来自 Chat 队列\n", encoding="utf-8")
    with FakeUpstream(load_script(path)) as up:
        api = client(up)
        assert api.responses.create(model="gpt-test", input="hi").output_text == "来自 Responses 队列"
        chat = api.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
    assert chat.choices[0].message.content == "来自 Chat 队列"
    assert Script.of({"openai_responses": ["x"]}).remaining == 1
