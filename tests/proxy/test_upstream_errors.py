"""Upstream failures reach the client as the upstream sent them and are recorded as such: error
statuses with bodies, retried attempts, connection resets, streams cut mid-way, in-stream error events,
and a client that goes away mid-stream."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import anthropic
import pytest

from tracekit.testing import ToolUse, by_turn, connection_reset, error_reply, text_reply, tool_use_reply

from .broken_streams import read_until_it_breaks
from .helpers import of_kind, recording, replaying, trace_records

HELLO = [{"role": "user", "content": "你好"}]
LONG = "这是一个很长的回答，" * 20


def _client(url: str, retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="k", max_retries=retries)


def test_an_error_status_and_body_pass_through_and_are_recorded(tmp_path: Path) -> None:
    script = [error_reply(400, "invalid_request_error", "messages: 第一条必须是 user")]
    with recording(script, tmp_path) as (_, proxy), pytest.raises(anthropic.BadRequestError) as caught:
        _client(proxy.url).messages.create(model="m", max_tokens=10, messages=HELLO)
    assert caught.value.status_code == 400
    assert caught.value.body == {"type": "error", "request_id": "req_fake_0001",
                                 "error": {"type": "invalid_request_error", "message": "messages: 第一条必须是 user"}}
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert (call["status"], call["error"]["type"], call["attempts"]) == (400, "invalid_request_error", 1)
    (error,) = of_kind(records, "error")
    assert (error["source"], error["status"], error["model_call"]) == ("upstream", 400, 0)
    assert "request_key" not in error, "a final failure is replayed from its model_call"


def test_sdk_retries_are_attempts_of_one_turn_and_replay_the_same_way(tmp_path: Path) -> None:
    script = by_turn([tool_use_reply(ToolUse("t", {})), text_reply("好了")])
    failing_first = iter([error_reply(529, should_retry=True, retry_after_ms=1)])

    def answer(request):  # type: ignore[no-untyped-def]
        return next(failing_first, None) or script(request)

    with recording(answer, tmp_path) as (upstream, proxy):
        client = _client(proxy.url, retries=2)
        first = client.messages.create(model="m", max_tokens=10, messages=HELLO)
        messages = [*HELLO, {"role": "assistant", "content": first.content},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[0].id,
                                                  "content": "ok"}]}]  # fmt: skip
        second = client.messages.create(model="m", max_tokens=10, messages=messages)
    assert [r.retry_count for r in upstream.requests] == [0, 1, 0]
    (records,) = trace_records(tmp_path)
    calls = of_kind(records, "model_call")
    assert [(c["status"], c["attempts"]) for c in calls] == [(200, 2), (200, 1)]
    (error,) = of_kind(records, "error")
    assert (error["status"], error["attempt"], error["model_call"]) == (529, 1, 0)
    assert error["request_key"] == calls[0]["request_key"]
    with replaying(tmp_path) as proxy:
        client = _client(proxy.url, retries=2)
        with pytest.raises(anthropic.InternalServerError):  # the recorded 529, without retries
            _client(proxy.url).messages.create(model="m", max_tokens=10, messages=HELLO)
        assert client.messages.create(model="m", max_tokens=10, messages=HELLO) == first
        assert client.messages.create(model="m", max_tokens=10, messages=messages) == second


def test_a_connection_reset_reaches_the_client_and_the_retry_is_an_attempt(tmp_path: Path) -> None:
    script = [connection_reset(), text_reply("好")]
    with recording(script, tmp_path) as (_, proxy):
        with pytest.raises(anthropic.APIConnectionError):
            _client(proxy.url).messages.create(model="m", max_tokens=10, messages=HELLO)
        reply = _client(proxy.url, retries=0).messages.create(
            model="m", max_tokens=10, messages=HELLO, extra_headers={"x-stainless-retry-count": "1"}
        )
    assert reply.content[0].text == "好"
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert (call["attempts"], call["status"]) == (2, 200)
    (error,) = of_kind(records, "error")
    assert (error["source"], error["transport"]) == ("transport", "reset")


def test_a_stream_cut_mid_way_is_cut_for_the_client_and_recorded_partial(tmp_path: Path) -> None:
    with recording([text_reply(LONG, chunk_size=10).cut_after(4)], tmp_path) as (_, proxy):
        recorded = read_until_it_breaks(_client(proxy.url), model="m", max_tokens=10, messages=HELLO)
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["partial"] is True and call["error"]["type"] == "transport_error"
    assert call["sse"].count("\n\n") == 4, "the four whole events and the start of the fifth"
    assert LONG.startswith(recorded.text) and recorded.text != LONG
    assert of_kind(records, "assistant_message") == [], "a partial reply is not part of the conversation"
    with replaying(tmp_path) as replay:
        replayed = read_until_it_breaks(_client(replay.url), model="m", max_tokens=10, messages=HELLO)
    assert replayed.text == recorded.text, "replay breaks the stream where the recording broke"


def test_an_in_stream_error_event_is_passed_on_and_recorded(tmp_path: Path) -> None:
    script = [text_reply(LONG).error_after(3, type="overloaded_error", message="过载")]
    with recording(script, tmp_path) as (_, proxy), pytest.raises(anthropic.APIStatusError) as caught:  # noqa: SIM117
        with _client(proxy.url).messages.stream(model="m", max_tokens=10, messages=HELLO) as stream:
            stream.get_final_text()
    assert "过载" in str(caught.value)
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["error"] == {"type": "overloaded_error", "message": "过载"}
    assert "event: error" in call["sse"]
    (error,) = of_kind(records, "error")
    assert error["source"] == "upstream"


def test_a_client_that_disconnects_mid_stream_leaves_a_partial_record(tmp_path: Path) -> None:
    slow = text_reply(LONG, chunk_size=5).delayed(per_event=0.02)
    with recording([slow], tmp_path) as (_, proxy):

        async def read_two_chunks_and_leave() -> None:
            async with aiohttp.ClientSession() as session:
                body = {"model": "m", "max_tokens": 10, "messages": HELLO, "stream": True}
                async with session.post(proxy.url + "/v1/messages", json=body) as response:
                    await response.content.readany()
                    await response.content.readany()
                    response.close()

        asyncio.run(read_two_chunks_and_leave())
    # Closing the proxy waits for the exchange in flight, which notices the client left at its next write.
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["partial"] is True and call["status"] == 200
    (error,) = of_kind(records, "error")
    assert error["source"] == "client"


def test_other_api_routes_are_forwarded_recorded_and_replayed(tmp_path: Path) -> None:
    with recording([], tmp_path) as (upstream, proxy), pytest.raises(anthropic.NotFoundError) as recorded:
        _client(proxy.url).messages.count_tokens(model="m", messages=HELLO)
    assert "tracekit fake upstream" in str(recorded.value), "the upstream's own answer came back"
    assert [request.path for request in upstream.requests] == ["/v1/messages/count_tokens"]
    (records,) = trace_records(tmp_path)
    (exchange,) = of_kind(records, "http_exchange")
    assert (exchange["method"], exchange["path"], exchange["status"]) == ("POST", "/v1/messages/count_tokens", 404)
    assert exchange["request"]["messages"] == HELLO
    with replaying(tmp_path) as proxy, pytest.raises(anthropic.NotFoundError) as replayed:
        _client(proxy.url).messages.count_tokens(model="m", messages=HELLO)
    assert replayed.value.body == recorded.value.body
