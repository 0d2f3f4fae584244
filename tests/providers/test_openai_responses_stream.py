"""Responses API streams: tracekit assembles the same bytes into the same response as the openai SDK's own
``responses.stream()`` machinery (``ResponseStreamState``), and JSON <-> SSE converts both ways.

The bytes come from the scripted fake upstream (``tracekit.testing``, JSON and SSE of the same replies) and
from ``render_stream``; a few variants are derived from them by editing one event (a terminal event without
``output``, which the SDK rebuilds from the finished items).
"""

from __future__ import annotations

import urllib.request
from typing import Any

import httpx2
import openai as openai_sdk
import orjson
import pytest
from deepdiff import DeepDiff
from provider_support import without_nulls

from tracekit.providers import openai_responses, parse_sse
from tracekit.providers.sse import encode_json_event
from tracekit.testing import FakeUpstream, RedactedThinking, Text, Thinking, ToolUse, message_reply

TOOLS = [{"type": "function", "name": "get_weather", "description": "weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
         {"type": "web_search"}]  # fmt: skip

REPLIES = {
    "text": message_reply(Text("北京今天晴，气温 18 度。")),
    "reasoning_text_tools": message_reply(
        Thinking("先查北京，再查上海。"), Text("我来查一下。"),
        ToolUse("get_weather", {"city": "北京"}), ToolUse("get_weather", {"city": "上海"}), chunk_size=3,
    ),
    "redacted_reasoning": message_reply(RedactedThinking("ZW5jcnlwdGVk"), Text("好的")),
    "tool_only": message_reply(ToolUse("get_weather", {"city": "广州", "days": 3})),
    "incomplete": message_reply(Text("这个回答被截断"), stop_reason="max_tokens"),
    "two_texts": message_reply(Text("第一段"), Text("第二段")),
}


def fake_bytes(reply: Any, *, stream: bool) -> bytes:
    """What the fake upstream sends for ``reply`` to a Responses request (raw HTTP body)."""
    with FakeUpstream([reply]) as upstream:
        body = {"model": "gpt-test", "input": "天气？", "tools": TOOLS, "stream": stream,
                "include": ["reasoning.encrypted_content"]}  # fmt: skip
        request = urllib.request.Request(upstream.url + "/v1/responses", data=orjson.dumps(body),
                                         headers={"content-type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as response:
            data: bytes = response.read()
            return data


def sdk_events(data: bytes) -> tuple[dict[str, Any] | None, list[Any]]:
    """The SDK's final response (None when it has none) and the events its stream helper yielded."""
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    client = openai_sdk.OpenAI(api_key="test-key-not-real", max_retries=0,
                               http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))  # fmt: skip
    with client.responses.stream(model="gpt-test", input="天气？", tools=TOOLS) as stream:  # type: ignore[arg-type]
        events = list(stream)
        final = stream._state._completed_response
        return (final.to_dict(mode="json") if final is not None else None), events


def sdk_assembled(data: bytes) -> dict[str, Any]:
    """The response the SDK ends with: ``get_final_response()``, or the response of the
    ``response.incomplete`` / ``response.failed`` event it yielded (its output filled from the items)."""
    final, events = sdk_events(data)
    if final is not None:
        return final
    terminal = [e for e in events if e.type in ("response.incomplete", "response.failed")]
    assert terminal, "the stream has no terminal event"
    response: dict[str, Any] = terminal[-1].response.to_dict(mode="json")
    return response


def same(theirs: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """The difference between two responses, where the SDK's nulls (unset optional fields, ``parsed``)
    mean absent and its float ``created_at`` equals our integer."""
    diff: dict[str, Any] = DeepDiff(without_nulls(theirs), without_nulls(ours), ignore_numeric_type_changes=True)
    return diff


def without_output(data: bytes, terminal: str) -> bytes:
    """``data`` with the ``output`` of its terminal event removed (the SDK then rebuilds it)."""
    frames = []
    for event in parse_sse(data):
        value = event.json()
        if value["type"] == terminal:
            del value["response"]["output"]
        frames.append(encode_json_event(value, event.event))
    return b"".join(frames)


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_fake_upstream_streams_assemble_like_the_sdk(name: str) -> None:
    data = fake_bytes(REPLIES[name], stream=True)
    ours = openai_responses.assemble_stream(parse_sse(data))
    assert same(sdk_assembled(data), ours) == {}
    assert ours == orjson.loads(fake_bytes(REPLIES[name], stream=False)), "the stream adds up to the JSON body"


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_rendered_streams_assemble_like_the_sdk_and_back_to_the_body(name: str) -> None:
    body = orjson.loads(fake_bytes(REPLIES[name], stream=False))
    data = openai_responses.render_stream(body)
    assert openai_responses.assemble_stream(parse_sse(data)) == body
    assert same(sdk_assembled(data), body) == {}


@pytest.mark.parametrize("name", ["reasoning_text_tools", "incomplete"])
def test_terminal_event_without_output_is_rebuilt_from_the_items(name: str) -> None:
    data = fake_bytes(REPLIES[name], stream=True)
    terminal = "response.incomplete" if name == "incomplete" else "response.completed"
    edited = without_output(data, terminal)
    ours = openai_responses.assemble_stream(parse_sse(edited))
    assert same(sdk_assembled(edited), ours) == {}
    assert ours["output"] == openai_responses.assemble_stream(parse_sse(data))["output"]


def test_failed_response_is_the_error_and_assembles_like_the_sdk() -> None:
    body = orjson.loads(fake_bytes(REPLIES["text"], stream=False))
    failed = {**body, "status": "failed", "error": {"code": "server_error", "message": "The model failed."}}
    data = openai_responses.render_stream(failed)
    assembler = openai_responses.stream_assembler()
    for event in parse_sse(data):
        assembler.feed(event)
    assert assembler.done and assembler.body() == failed
    assert openai_responses.response_error(assembler.body()) == {"code": "server_error", "message": "The model failed."}
    assert same(sdk_assembled(data), failed) == {}


def test_error_event_gives_the_error_body_and_the_sdk_raises() -> None:
    reply = REPLIES["text"].error_after(3, type="rate_limit_error", message="Too many requests", status=429)
    data = fake_bytes(reply, stream=True)
    assembler = openai_responses.stream_assembler()
    for event in parse_sse(data):
        assembler.feed(event)
    error = openai_responses.response_error(assembler.body())
    assert error is not None and error["message"] == "Too many requests"
    assert not assembler.done
    with pytest.raises(openai_sdk.APIError, match="Too many requests"):
        sdk_events(data)
    rendered = openai_responses.render_stream(assembler.body())
    assert openai_responses.assemble_stream(parse_sse(rendered)) == assembler.body()


def test_flat_error_event_of_the_api_reference_is_read_too() -> None:
    event = {"type": "error", "code": "server_error", "message": "boom", "param": None, "sequence_number": 4}
    body = openai_responses.assemble_stream(parse_sse(encode_json_event(event, "error")))
    assert body == {"error": {"code": "server_error", "message": "boom", "param": None}}


def test_cut_stream_keeps_finished_items_and_grown_text() -> None:
    data = fake_bytes(REPLIES["reasoning_text_tools"], stream=True)
    events = parse_sse(data)
    first_delta = next(i for i, e in enumerate(events) if e.json()["type"] == "response.function_call_arguments.delta")
    assembler = openai_responses.stream_assembler()
    for event in events[: first_delta + 1]:
        assembler.feed(event)
    body = assembler.body()
    assert not assembler.done and assembler.error is None
    kinds = [item["type"] for item in body["output"]]
    assert kinds == ["reasoning", "message", "function_call"]
    assert body["output"][1]["content"][0]["text"] == "我来查一下。"
    assert body["output"][2]["status"] == "in_progress" and body["output"][2]["arguments"] != ""
    assert body["status"] == "in_progress" and body["usage"] is None
