"""A gzip bomb from the upstream (issue 27 C): a JSON body that inflates far past ``max_response_bytes`` is
answered with a clear 502 (not retried), recorded as refused with what was received, and the proxy keeps
serving. The upstream is a real aiohttp server sending real gzip; the client is the real anthropic SDK."""

from __future__ import annotations

import gzip
from pathlib import Path

import anthropic
import orjson
import pytest
from aiohttp import web

from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor

from .helpers import trace_records
from .hostile_upstream import HostileUpstream, gzip_of_zeros

LIMIT = 1024 * 1024
BOMB = gzip_of_zeros(64 * LIMIT)  # 64 MB of zeros in about 64 kB
REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn",
         "content": [{"type": "text", "text": "好的"}], "usage": {"input_tokens": 3, "output_tokens": 2}}  # fmt: skip


async def _bomb_then_answer(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    if body["messages"][0]["content"] == "bomb":
        return web.Response(body=BOMB, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    compressed = gzip.compress(orjson.dumps(REPLY))
    return web.Response(body=compressed, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})


def test_a_gzip_bomb_gets_a_502_is_recorded_and_the_proxy_serves_on(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    with HostileUpstream(_bomb_then_answer) as up:
        config = ProxyConfig(upstream=up.url, out_dir=out, redactor=Redactor(), max_response_bytes=LIMIT)
        with RunningProxy(config) as proxy:
            client = anthropic.Anthropic(base_url=proxy.url, api_key="tk-test-key-123", max_retries=2)
            with pytest.raises(anthropic.APIStatusError) as raised:
                client.messages.create(model="claude-x", max_tokens=8, messages=[{"role": "user", "content": "bomb"}],
                                       extra_headers={"x-tracekit-session": "bomb"})  # fmt: skip
            assert raised.value.status_code == 502
            assert "max-response-bytes" in str(raised.value)
            assert up.requests == 1  # x-should-retry: false, so the SDK did not send the bomb's request again
            reply = client.messages.create(model="claude-x", max_tokens=8,
                                           messages=[{"role": "user", "content": "hello"}],
                                           extra_headers={"x-tracekit-session": "after"})  # fmt: skip
            assert reply.content[0].text == "好的"  # gzip honestly used is decoded as before
            proxy.wait_written()
    traces = {records[0]["session"]: records for records in trace_records(out)}
    bombed = next(r for r in traces["bomb"] if r["kind"] == "model_call")
    assert bombed["status"] == 502
    assert bombed["error"]["type"] == "response_too_large"
    assert "bytes of gzip received" in bombed["error"]["message"]
    after = next(r for r in traces["after"] if r["kind"] == "model_call")
    assert after["status"] == 200 and "error" not in after
