"""Anthropic provider: body -> canonical -> body, JSON -> SSE -> JSON, requests, usage, errors."""

from __future__ import annotations

import anthropic as anthropic_sdk
import httpx2
import pytest
from deepdiff import DeepDiff
from provider_support import DATA, capture_files, load_bodies

from tracekit.providers import anthropic, parse_sse
from tracekit.trace import Header, ToolCall, ToolResult, TraceBuilder, Usage

BODIES = load_bodies("anthropic_bodies.json")


def _assembled_streams() -> dict[str, dict]:
    streams = {p.name: p.read_bytes() for p in [*capture_files(), *sorted(DATA.glob("anthropic_*.sse"))]}
    return {name: anthropic.assemble_stream(parse_sse(data)) for name, data in streams.items()}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_body_canonical_body_round_trip(name: str) -> None:
    body = BODIES[name]
    message, meta = anthropic.response_to_canonical(body)
    assert DeepDiff(body, anthropic.canonical_to_response(message, meta)) == {}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_json_stream_json_round_trip(name: str) -> None:
    body = BODIES[name]
    assert DeepDiff(body, anthropic.assemble_stream(parse_sse(anthropic.render_stream(body)))) == {}


def test_assembled_streams_round_trip_through_canonical_and_sse() -> None:
    for name, body in _assembled_streams().items():
        message, meta = anthropic.response_to_canonical(body)
        assert DeepDiff(body, anthropic.canonical_to_response(message, meta)) == {}, name
        if anthropic.response_error(body) is None:
            assert DeepDiff(body, anthropic.assemble_stream(parse_sse(anthropic.render_stream(body)))) == {}, name


def test_canonical_without_meta_is_a_valid_message_that_reads_back() -> None:
    message = {"role": "assistant", "content": [
        {"type": "text", "text": "查询中"},
        {"type": "tool_use", "id": "toolu_x", "name": "search", "input": {"q": "北京"}},
    ]}
    body = anthropic.canonical_to_response(message, model="claude-x", usage=Usage(input_tokens=5, output_tokens=2))
    parsed = anthropic_sdk.types.Message.model_validate(body)
    assert parsed.stop_reason == "tool_use"
    assert parsed.usage.input_tokens == 5
    assert anthropic.response_message(body) == message
    assert body["id"] == anthropic.canonical_to_response(message)["id"], "ids are deterministic"


def test_unparseable_tool_input_is_flagged_in_canonical_only() -> None:
    message = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_x", "name": "search", "input": "{bad", "_input_parse_error": True},
    ]}
    body = anthropic.canonical_to_response(message)
    assert body["content"] == [{"type": "tool_use", "id": "toolu_x", "name": "search", "input": "{bad"}]
    assert anthropic.response_message(body) == message


def test_changed_canonical_content_is_rendered() -> None:
    message, meta = anthropic.response_to_canonical(BODIES["tool_use"])
    assert message is not None
    message["content"][1]["input"] = {"city": "上海"}
    body = anthropic.canonical_to_response(message, meta, stop_reason="end_turn")
    assert body["content"][1]["input"] == {"city": "上海"}
    assert body["stop_reason"] == "end_turn"
    assert body["id"] == BODIES["tool_use"]["id"]


def test_response_accessors() -> None:
    body = BODIES["thinking"]
    assert anthropic.response_usage(body) == Usage(
        input_tokens=512, output_tokens=64, cache_creation_input_tokens=128, cache_read_input_tokens=1024,
        service_tier="standard",
    )
    assert anthropic.response_stop_reason(body) == "end_turn"
    assert anthropic.response_model(body) == "claude-sonnet-4-5"
    assert anthropic.response_error(body) is None
    assert anthropic.response_message(BODIES["error"]) is None
    assert anthropic.response_error(BODIES["error"]) == {"type": "overloaded_error", "message": "Overloaded"}


def test_request_conversation_keeps_blocks() -> None:
    body = {
        "model": "claude-x",
        "stream": True,
        "system": [{"type": "text", "text": "你是旅行助手。", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "看看这张图"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "需要查", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "ocr", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "Error: 超时", "is_error": True},
            ]},
        ],
    }
    system, messages = anthropic.request_conversation(body)
    assert system == body["system"]
    assert messages == body["messages"]
    assert anthropic.request_stream(body) and anthropic.request_model(body) == "claude-x"
    builder = TraceBuilder(Header(trace_id="t"))
    builder.add_conversation(messages, system)
    calls = [r for r in builder.records if isinstance(r, ToolCall)]
    results = [r for r in builder.records if isinstance(r, ToolResult)]
    assert [(c.name, c.id) for c in calls] == [("ocr", "t1")]
    assert results[0].is_error and results[0].call_index == 0


@pytest.mark.parametrize(("status", "kind", "exception"), [
    (429, "rate_limit_error", anthropic_sdk.RateLimitError),
    (529, "overloaded_error", anthropic_sdk.InternalServerError),
    (400, "invalid_request_error", anthropic_sdk.BadRequestError),
])
def test_error_body_is_read_by_the_sdk(status: int, kind: str, exception: type[Exception]) -> None:
    body = anthropic.error_body(status, "出错了")
    assert body == {"type": "error", "error": {"type": kind, "message": "出错了"}}

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, json=body, headers={"x-should-retry": "false"})

    client = anthropic_sdk.Anthropic(api_key="test-key-not-real", max_retries=0,
                                     http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    with pytest.raises(exception) as caught:
        client.messages.create(model="m", max_tokens=1, messages=[{"role": "user", "content": "hi"}])
    assert caught.value.body == body  # type: ignore[attr-defined]


def test_partial_meta_is_completed_and_real_bodies_get_nothing_added() -> None:
    body = anthropic.canonical_to_response({"role": "assistant", "content": "好"}, {"model": "claude-x"})
    assert anthropic_sdk.types.Message.model_validate(body).content[0].text == "好"  # type: ignore[union-attr]
    sparse = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}], "model": "m"}
    assert anthropic.canonical_to_response(*anthropic.response_to_canonical(sparse)) == sparse
