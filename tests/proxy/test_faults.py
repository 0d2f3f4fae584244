"""Transport faults from a case: HTTP errors with the provider's body and a chosen x-should-retry,
added latency, a stream cut after N events, an in-stream error event; in record and in replay."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import anthropic
import openai
import pytest

from tracekit.testing import text_reply

from .broken_streams import read_until_it_breaks
from .helpers import of_kind, recording, replaying, trace_records

HELLO = [{"role": "user", "content": "你好"}]
LONG = "一二三四五六七八九十" * 10


def test_http_error_fault_on_the_first_request_is_retried_by_the_sdk(tmp_path: Path) -> None:
    case = {"faults": [{"type": "http_error", "status": 529, "should_retry": True, "on_requests": [1]}]}
    with recording([text_reply("好")], tmp_path, case=case) as (upstream, proxy):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=1)
        message = client.messages.create(model="m", max_tokens=10, messages=HELLO)
    assert message.content[0].text == "好"
    assert len(upstream.requests) == 1, "the fault answered the first attempt without asking upstream"
    (records,) = trace_records(tmp_path)
    (fault,) = of_kind(records, "intercept")
    assert fault["mode"] == "fault" and fault["injected"] == {"type": "http_error", "status": 529, "should_retry": True}
    (error,) = of_kind(records, "error")
    assert (error["source"], error["status"], error["body"]["error"]["type"]) == ("proxy", 529, "overloaded_error")
    (call,) = of_kind(records, "model_call")
    assert (call["attempts"], call["status"]) == (2, 200)
    # Replayed with the same case, the fault strikes again and the retry is answered from the recording.
    with replaying(tmp_path, case=case) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=1)
        assert client.messages.create(model="m", max_tokens=10, messages=HELLO) == message
        assert proxy.proxy.misses == []


def test_http_error_fault_with_should_retry_false_stops_the_sdk(tmp_path: Path) -> None:
    case = {"faults": [{"type": "http_error", "status": 500, "should_retry": False}]}
    with recording([text_reply("好")], tmp_path, case=case) as (upstream, proxy):
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=3)
        with pytest.raises(openai.InternalServerError) as caught:
            client.chat.completions.create(model="m", messages=HELLO)
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert isinstance(caught.value.body, dict) and caught.value.body["type"] == "server_error"  # openai error shape
    assert upstream.requests == []
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert (call["status"], call["attempts"], call["fault"]) == (500, 1, True)


def test_latency_fault_delays_the_answer(tmp_path: Path) -> None:
    case = {"faults": [{"type": "latency", "latency_ms": 300}]}
    with recording([text_reply("好")], tmp_path, case=case) as (_, proxy):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        started = time.perf_counter()
        client.messages.create(model="m", max_tokens=10, messages=HELLO)
        elapsed = time.perf_counter() - started
    assert elapsed >= 0.3
    (records,) = trace_records(tmp_path)
    assert of_kind(records, "model_call")[0]["latency_ms"] >= 300


def _raw_stream(url: str, path: str, body: dict) -> tuple[bytes, bool]:
    """POST a streaming request; the bytes received and whether the body ended before it was complete."""

    async def run() -> tuple[bytes, bool]:
        received = b""
        async with aiohttp.ClientSession() as session, session.post(url + path, json=body) as response:
            try:
                async for chunk in response.content.iter_any():
                    received += chunk
            except aiohttp.ClientPayloadError:  # aiohttp's one class for "the body ended early"
                return received, True
        return received, False

    return asyncio.run(run())


def test_stream_cut_fault_sends_exactly_n_events_then_cuts(tmp_path: Path) -> None:
    case = {"faults": [{"type": "stream_cut", "cut_after_events": 3}]}
    body = {"model": "m", "max_tokens": 10, "messages": HELLO, "stream": True}
    with recording([text_reply(LONG, chunk_size=4)], tmp_path, case=case) as (_, proxy):
        received, cut = _raw_stream(proxy.url, "/v1/messages", body)
    assert cut, "the client saw the body end before it was complete"
    assert received.count(b"\n\n") == 3 and received.endswith(b"\n\n")
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["partial"] is True and call["transport"] == "fault_cut"
    assert call["sse"].encode() == received
    with replaying(tmp_path, case=case) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        broken = read_until_it_breaks(client, model="m", max_tokens=10, messages=HELLO)
    assert LONG.startswith(broken.text) and broken.text != LONG, "replay cuts the stream where the fault says"


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_stream_error_fault_sends_the_providers_error_event(tmp_path: Path, provider: str) -> None:
    case = {"faults": [{"type": "stream_error", "after_events": 2, "error_type": "overloaded_error", "message": "忙"}]}
    with recording([text_reply(LONG)], tmp_path, case=case) as (_, proxy):
        if provider == "anthropic":
            client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
            with pytest.raises(anthropic.APIStatusError, match="忙"):  # noqa: SIM117
                with client.messages.stream(model="m", max_tokens=10, messages=HELLO) as stream:
                    stream.get_final_text()
        else:
            client_oa = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0)
            with pytest.raises(openai.APIError, match="忙"):
                for _ in client_oa.chat.completions.create(model="m", messages=HELLO, stream=True):
                    pass
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["error"]["message"] == "忙"
    assert call["sse"].count("\n\n") >= 3
