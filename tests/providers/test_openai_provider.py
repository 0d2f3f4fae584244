"""OpenAI provider: requests to canonical conversations, body <-> canonical, JSON <-> SSE, usage, errors."""

from __future__ import annotations

import httpx2
import openai as openai_sdk
import pytest
from deepdiff import DeepDiff
from provider_support import DATA, load_bodies

from tracekit.providers import openai, parse_sse
from tracekit.trace import Header, ModelCall, ToolCall, ToolResult, TraceBuilder, Usage

BODIES = load_bodies("openai_bodies.json")


@pytest.mark.parametrize("name", sorted(BODIES))
def test_body_canonical_body_round_trip(name: str) -> None:
    body = BODIES[name]
    message, meta = openai.response_to_canonical(body)
    assert DeepDiff(body, openai.canonical_to_response(message, meta)) == {}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_json_stream_json_round_trip(name: str) -> None:
    body = BODIES[name]
    data = openai.render_stream(body)
    assert data.endswith(b"data: [DONE]\n\n")
    assert DeepDiff(body, openai.assemble_stream(parse_sse(data))) == {}


@pytest.mark.parametrize("name", ["openai_parallel_tools.sse", "openai_refusal.sse", "openai_error.sse"])
def test_assembled_streams_round_trip(name: str) -> None:
    body = openai.assemble_stream(parse_sse((DATA / name).read_bytes()))
    message, meta = openai.response_to_canonical(body)
    assert DeepDiff(body, openai.canonical_to_response(message, meta)) == {}
    assert DeepDiff(body, openai.assemble_stream(parse_sse(openai.render_stream(body)))) == {}


def test_parallel_tool_calls_in_canonical_form() -> None:
    message = openai.response_message(BODIES["parallel_tools"])
    assert message == {"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_tk_b2a", "name": "get_weather",
         "input": {"city": "北京", "date": "2026-04-08"}},
        {"type": "tool_use", "id": "call_tk_b2b", "name": "get_weather", "input": {"city": "上海"}},
        {"type": "tool_use", "id": "call_tk_b2c", "name": "book", "input": '{"flight": "CA12',
         "_input_parse_error": True},
    ]}


def test_refusal_and_reasoning_blocks() -> None:
    assert openai.response_message(BODIES["refusal"]) == {
        "role": "assistant", "content": [{"type": "refusal", "text": "抱歉，我无法帮助。"}]}
    assert openai.response_message(BODIES["reasoning_content"]) == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "先想一想……"}, {"type": "text", "text": "答案是 42。"}]}


def test_edited_tool_input_is_rendered_and_unchanged_ones_kept_verbatim() -> None:
    message, meta = openai.response_to_canonical(BODIES["parallel_tools"])
    assert message is not None
    message["content"][1]["input"] = {"city": "广州"}
    body = openai.canonical_to_response(message, meta)
    calls = body["choices"][0]["message"]["tool_calls"]
    original = BODIES["parallel_tools"]["choices"][0]["message"]["tool_calls"]
    assert calls[0] == original[0], "an unchanged call keeps its exact argument text"
    assert calls[1]["function"]["arguments"] == '{"city":"广州"}'
    assert calls[2]["function"]["arguments"] == '{"flight": "CA12'


def test_canonical_without_meta_is_a_valid_completion_that_reads_back() -> None:
    message = {"role": "assistant", "content": [
        {"type": "text", "text": "查一下"},
        {"type": "tool_use", "id": "call_1", "name": "search", "input": {"q": "北京"}},
    ]}
    usage = Usage(input_tokens=10, cache_read_input_tokens=90, output_tokens=5)
    body = openai.canonical_to_response(message, model="gpt-x", usage=usage)
    parsed = openai_sdk.types.chat.ChatCompletion.model_validate(body)
    assert parsed.choices[0].finish_reason == "tool_calls"
    assert parsed.usage is not None and parsed.usage.prompt_tokens == 100
    assert openai.response_message(body) == message
    assert openai.response_usage(body).model_dump(include={"input_tokens", "cache_read_input_tokens",
                                                           "output_tokens"}) == usage.model_dump(exclude_none=True)


def test_usage_counts_cached_tokens_apart() -> None:
    usage = openai.response_usage(BODIES["text"])
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (44, 256, 20)
    assert openai.response_usage(BODIES["reasoning_content"]).cache_read_input_tokens is None
    assert openai.response_stop_reason(BODIES["parallel_tools"]) == "tool_calls"
    assert openai.response_model(BODIES["text"]) == "gpt-4o-2024-08-06"


def test_request_conversation() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "你是助手。"},
            {"role": "developer", "content": [{"type": "text", "text": "用中文回答。"}]},
            {"role": "user", "content": [
                {"type": "text", "text": "这是哪里？"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ", "detail": "low"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            ]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "geo", "arguments": "{\"q\": \"图\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "ocr", "arguments": "not json"}},
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "天安门"},
            {"role": "tool", "tool_call_id": "c2", "name": "ocr",
             "content": [{"type": "text", "text": "Error: 无文字"}]},
            {"role": "user", "content": "谢谢"},
        ],
    }
    system, messages = openai.request_conversation(body)
    assert system == [{"type": "text", "text": "你是助手。"}, {"type": "text", "text": "用中文回答。"}]
    assert messages == [
        {"role": "user", "content": [
            {"type": "text", "text": "这是哪里？"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"},
             "detail": "low"},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        ]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "c1", "name": "geo", "input": {"q": "图"}},
            {"type": "tool_use", "id": "c2", "name": "ocr", "input": "not json", "_input_parse_error": True},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "天安门"},
            {"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "Error: 无文字"}],
             "name": "ocr"},
        ]},
        {"role": "user", "content": "谢谢"},
    ]
    builder = TraceBuilder(Header(trace_id="t"))
    builder.add_conversation(messages, system)
    calls = [r for r in builder.records if isinstance(r, ToolCall)]
    results = [r for r in builder.records if isinstance(r, ToolResult)]
    assert [(c.name, c.input_parse_error) for c in calls] == [("geo", False), ("ocr", True)]
    assert [r.call_index for r in results] == [0, 1]


def test_single_system_message_stays_a_string() -> None:
    system, messages = openai.request_conversation({"messages": [
        {"role": "system", "content": "S"}, {"role": "user", "content": "U"}]})
    assert (system, messages) == ("S", [{"role": "user", "content": "U"}])
    assert openai.request_conversation({"messages": [{"role": "user", "content": "U"}]})[0] is None


@pytest.mark.parametrize(("status", "exception"), [
    (429, openai_sdk.RateLimitError),
    (500, openai_sdk.InternalServerError),
    (401, openai_sdk.AuthenticationError),
])
def test_error_body_is_read_by_the_sdk(status: int, exception: type[Exception]) -> None:
    body = openai.error_body(status, "出错了")
    assert openai.response_error(body) is not None and body["error"]["message"] == "出错了"

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, json=body, headers={"x-should-retry": "false"})

    client = openai_sdk.OpenAI(api_key="test-key-not-real", max_retries=0,
                               http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    with pytest.raises(exception) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.body == body["error"]  # type: ignore[attr-defined]


def test_echoed_history_is_recorded_once() -> None:
    """As the proxy will: each request re-sends the history with the reply echoed back (content "" here
    where the response said null); tool calls are still derived once."""
    reply_body = openai.canonical_to_response({"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_1", "name": "search", "input": {"q": "北京"}}]})
    first = {"messages": [{"role": "user", "content": "查北京"}]}
    echoed = {**reply_body["choices"][0]["message"], "content": ""}
    second = {"messages": [*first["messages"], echoed, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]}
    builder = TraceBuilder(Header(trace_id="t"))
    builder.add_conversation(openai.request_conversation(first)[1])
    builder.add_model_call(ModelCall(index=0, provider="openai"), openai.response_message(reply_body))
    builder.add_conversation(openai.request_conversation(second)[1])
    kinds = [r.kind for r in builder.records[1:]]
    assert kinds == ["user_message", "model_call", "assistant_message", "tool_call", "tool_result"]


def test_partial_meta_is_completed() -> None:
    meta = {"model": "gpt-x", "service_tier": "flex"}
    body = openai.canonical_to_response({"role": "assistant", "content": "好"}, meta)
    parsed = openai_sdk.types.chat.ChatCompletion.model_validate(body)
    assert (parsed.model, parsed.service_tier, parsed.choices[0].message.content) == ("gpt-x", "flex", "好")
