"""Amazon Bedrock's wire formats: the event-stream codec checked against botocore's own parser on the bytes the
fake upstream sends, and the Converse and InvokeModel providers' round trips (body <-> canonical, body <->
stream)."""

from __future__ import annotations

import json
import urllib.request
import uuid
from typing import Any

import pytest
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer

from tracekit.errors import EventStreamError
from tracekit.providers import get_provider, provider_for_path
from tracekit.providers.eventstream import FrameSplitter, decode_message, encode_message, split_frames
from tracekit.testing import FakeUpstream, Thinking, ToolUse, message_reply, text_reply, tool_use_reply

CONVERSE = {"messages": [{"role": "user", "content": [{"text": "天气？"}]}], "system": [{"text": "简短。"}]}


def fake_stream_bytes(reply: Any, path: str, body: dict[str, Any]) -> bytes:
    """The raw bytes the fake upstream sends for one streamed request (read with urllib: no client parses them)."""
    with FakeUpstream([reply]) as upstream:
        request = urllib.request.Request(upstream.url + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"content-type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
            return bytes(response.read())


def botocore_messages(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """botocore's parse of an event stream: each message's headers and payload."""
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(dict(message.headers), message.payload) for message in buffer]


@pytest.mark.parametrize("path", ["/model/m/converse-stream", "/model/m/invoke-with-response-stream"])
def test_the_fake_upstreams_event_stream_parses_the_same_in_botocore(path: str) -> None:
    reply = tool_use_reply(ToolUse("get_weather", {"city": "北京"}), "我查一下。", thinking="先查")
    body = CONVERSE if "converse" in path else {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9,
                                                "messages": [{"role": "user", "content": "天气？"}]}  # fmt: skip
    data = fake_stream_bytes(reply, path, body)
    ours = [(message.headers, message.payload) for message in map(decode_message, split_frames(data))]
    assert ours == botocore_messages(data)
    assert len(ours) > 5 and all(headers[":message-type"] == "event" for headers, _ in ours)


def test_every_header_type_and_both_crcs_as_botocore_reads_them() -> None:
    headers: dict[str, Any] = {"yes": True, "no": False, "count": 7, "blob": b"\x00\xff", "name": "名字",
                               "id": uuid.UUID(int=5)}  # fmt: skip
    frame = encode_message(headers, b'{"a":1}')
    [(parsed, payload)] = botocore_messages(frame)
    assert payload == b'{"a":1}' and decode_message(frame).headers == headers
    assert parsed == {**headers, "id": uuid.UUID(int=5).bytes}  # (botocore gives a UUID's 16 bytes)
    for position in (9, len(frame) - 6):  # the prelude CRC, then the payload under the message CRC
        broken = bytearray(frame)
        broken[position] ^= 1
        with pytest.raises(EventStreamError, match="CRC"):
            decode_message(bytes(broken))
        with pytest.raises(ChecksumMismatch):
            botocore_messages(bytes(broken))


def test_frames_are_split_across_chunks_and_a_broken_length_stops_the_split() -> None:
    frames = [encode_message({":event-type": f"e{i}"}, b"x" * i) for i in range(3)]
    data = b"".join(frames)
    splitter = FrameSplitter()
    assert [frame for byte in range(len(data)) for frame in splitter.feed(data[byte : byte + 1])] == frames
    assert split_frames(data[:-3]) == [*frames[:2], frames[2][:-3]], "a cut frame is kept as the tail"
    splitter = FrameSplitter()
    assert splitter.feed(b"\xff\xff\xff\xff" + b"\x00" * 20) == [] and splitter.broken


CONVERSE_BODY = {"output": {"message": {"role": "assistant", "content": [
    {"reasoningContent": {"reasoningText": {"text": "先查", "signature": "c2ln"}}}, {"text": "我查一下。"},
    {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "北京"}}}]}},
    "stopReason": "tool_use", "usage": {"inputTokens": 9, "outputTokens": 4, "totalTokens": 13},
    "metrics": {"latencyMs": 120}}  # fmt: skip


def test_converse_bodies_round_trip_through_canonical_and_through_the_stream() -> None:
    provider = get_provider("bedrock_converse")
    message, meta = provider.response_to_canonical(CONVERSE_BODY)
    assert message is not None and [block["type"] for block in message["content"]] == ["thinking", "text", "tool_use"]
    assert provider.canonical_to_response(message, meta) == CONVERSE_BODY
    events = provider.stream_parser().feed(provider.render_stream(CONVERSE_BODY))
    assert provider.assemble_stream(events) == CONVERSE_BODY
    assert provider.canonical_stop_reason({"stopReason": "guardrail_intervened"}) == "refusal"
    assert provider.response_usage(CONVERSE_BODY).input_tokens == 9
    system, messages = provider.request_conversation({**CONVERSE, "messages": [*CONVERSE["messages"], {
        "role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "error",
                                                    "content": [{"json": {"温度": 25}}]}}]}]})  # fmt: skip
    assert system == "简短。"
    assert messages[1]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                                       "content": [{"type": "text", "text": '{"温度":25}'}]}]  # fmt: skip


def test_an_error_mid_stream_and_an_error_body_are_the_calls_error() -> None:
    for name in ("bedrock_converse", "bedrock_invoke"):
        provider = get_provider(name)
        error = provider.assemble_stream(provider.stream_parser().feed(provider.error_event("overloaded_error", "忙")))
        assert provider.response_error(error) is not None and provider.response_error(error)["message"] == "忙"
        body = provider.error_body(429, "slow down")
        assert body == {"message": "slow down", "__type": "ThrottlingException"}
        assert provider.response_message(body) is None
    parser = get_provider("bedrock_converse").stream_parser()
    [event] = parser.feed(b"\x00\x00\x00\x20" + b"\x00" * 40)
    assert event.event == "invalidStreamException", "bytes that are not an event stream end it with an error"


def test_invoke_streams_wrap_the_messages_api_events() -> None:
    provider = get_provider("bedrock_invoke")
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": [
        {"type": "text", "text": "好"}, {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}],
        "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2}}  # fmt: skip
    frames = split_frames(provider.render_stream(body))
    assert {decode_message(frame).headers[":event-type"] for frame in frames} == {"chunk"}
    assert provider.assemble_stream(provider.stream_parser().feed(b"".join(frames))) == body


def test_the_path_names_the_model_and_the_stream() -> None:
    bound = provider_for_path("/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream")
    assert bound is not None and bound.NAME == "bedrock_converse"
    assert bound.request_model({}) == "anthropic.claude-3-haiku-20240307-v1:0" and bound.request_stream({})
    invoke = provider_for_path("/model/m/invoke")
    assert invoke is not None and invoke.NAME == "bedrock_invoke" and not invoke.request_stream({})
    assert provider_for_path("/model/m/unknown") is None
    arn = provider_for_path("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.claude/converse")
    assert arn is not None and arn.request_model({}) == "arn:aws:bedrock:us-east-1:1:inference-profile/us.claude"


def test_the_fake_upstream_scripts_thinking_on_converse() -> None:
    with FakeUpstream([message_reply(Thinking("想"), *text_reply("好").content)]) as upstream:
        request = urllib.request.Request(upstream.url + "/model/m/converse", data=json.dumps(CONVERSE).encode(),
                                         method="POST", headers={"content-type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as response:
            body = json.loads(response.read())
        assert upstream.requests[0].model == "m" and not upstream.requests[0].stream
    assert body["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]["text"] == "想"
    assert body["output"]["message"]["content"][1] == {"text": "好"}


def test_invoke_intercepts_and_guard_notes_are_the_messages_apis() -> None:
    from tracekit.intercepts import config_from, rewrite_request

    provider = get_provider("bedrock_invoke")
    call = {"type": "tool_use", "id": "c1", "name": "search", "input": {"q": "北京"}}
    body = {"anthropic_version": "bedrock-2023-05-31", "messages": [{"role": "assistant", "content": [call]}, {
        "role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]}]}  # fmt: skip
    injected = {"is_error": True, "content": "服务不可用"}
    intercepts = config_from({"type": "tool_intercept", "intercept_tool": "search",
                              "inject_tool_result": injected}).intercepts  # fmt: skip
    rewrite = rewrite_request(provider, body, intercepts)
    assert rewrite.body["messages"][1]["content"][0] == {"type": "tool_result", "tool_use_id": "c1",
                                                         "content": "服务不可用", "is_error": True}  # fmt: skip
    noted = provider.with_note(body, "注意")
    assert noted is not None and noted["messages"][1]["content"][-1] == {"type": "text", "text": "注意"}
    converse = get_provider("bedrock_converse")
    noted = converse.with_note(CONVERSE, "注意")
    assert noted is not None and noted["messages"][0]["content"] == [{"text": "天气？"}, {"text": "注意"}]
    assert CONVERSE["messages"][0]["content"] == [{"text": "天气？"}], "the request itself is unchanged"
