"""Every route is recorded: token counting, model lists and a model route tracekit does not read go through
``tracekit record`` as the official SDKs send them, land on disk as ``http_exchange`` records (in the
session the request names, or in the side file), and come back from replay by method, path and body."""

from __future__ import annotations

import logging
import signal
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import openai
import orjson
import pytest
from aiohttp import web

from tracekit.proxy import ProxyConfig, RunningProxy, route_key
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, ScriptLike, text_reply

from .helpers import of_kind, replaying, trace_records

HELLO: list[Any] = [{"role": "user", "content": "你好"}]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def _count_tokens(request: web.Request) -> web.Response:
    body = await request.json()
    return web.json_response({"input_tokens": len(orjson.dumps(body["messages"])) // 4})


async def _models(request: web.Request) -> web.Response:
    if "anthropic-version" in request.headers:
        model = {"type": "model", "id": "claude-fake", "display_name": "Fake", "created_at": "2026-01-01T00:00:00Z"}
        return web.json_response({"data": [model], "has_more": False, "first_id": "claude-fake",
                                  "last_id": "claude-fake"})  # fmt: skip
    return web.json_response({"object": "list", "data": [{"id": "gpt-fake", "object": "model", "created": 0,
                                                          "owned_by": "tracekit"}]})  # fmt: skip


async def _completions(request: web.Request) -> web.StreamResponse:
    """OpenAI's legacy completions, streamed: model output tracekit has no provider for."""
    body = await request.json()
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    for text in ("北京", "今天晴。"):
        chunk = {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": body["model"],
                 "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": None}]}  # fmt: skip
        await response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


EXTRA: dict[tuple[str, str], Handler] = {
    ("POST", "/v1/messages/count_tokens"): _count_tokens,
    ("GET", "/v1/models"): _models,
    ("POST", "/v1/completions"): _completions,
}


class RoutesUpstream(FakeUpstream):
    """The fake upstream, also serving token counting, model lists and legacy completions."""

    def app(self) -> web.Application:
        app = super().app()

        @web.middleware
        async def extra(request: web.Request, handler: Handler) -> web.StreamResponse:
            route = EXTRA.get((request.method, request.path))
            return await (route or handler)(request)

        app.middlewares.append(extra)
        return app


@contextmanager
def recording(script: ScriptLike, out: Path) -> Iterator[RunningProxy]:
    """A recording proxy in front of ``RoutesUpstream``."""
    with RoutesUpstream(script) as upstream, RunningProxy(ProxyConfig(upstream=upstream.url, out_dir=out,
                                                                      redactor=Redactor())) as proxy:  # fmt: skip
        yield proxy


def _anthropic(url: str, session: str | None = None) -> anthropic.Anthropic:
    headers = {"x-tracekit-session": session} if session else None
    return anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, default_headers=headers)


def _openai(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)


def _sdk_calls(url: str) -> tuple[int, list[str], list[str], str]:
    """count_tokens in a named session, both SDKs' models.list(), then a streamed legacy completion."""
    client = _anthropic(url, "counting")
    counted = client.messages.count_tokens(model="claude-fake", messages=HELLO).input_tokens
    reply = client.messages.create(model="claude-fake", max_tokens=10, messages=HELLO).content[0]
    assert reply.type == "text" and reply.text == "你好！"
    anthropic_models = [model.id for model in _anthropic(url).models.list()]
    openai_models = [model.id for model in _openai(url).models.list()]
    stream = _openai(url).completions.create(model="gpt-fake", prompt="天气", stream=True)
    text = "".join(chunk.choices[0].text for chunk in stream)
    return counted, anthropic_models, openai_models, text


def test_count_tokens_model_lists_and_an_unread_model_route_record_and_replay(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tracekit")
    with recording([text_reply("你好！")], tmp_path) as proxy:
        recorded = _sdk_calls(proxy.url)
    assert recorded == (len(orjson.dumps(HELLO)) // 4, ["claude-fake"], ["gpt-fake"], "北京今天晴。")
    announced = [r.getMessage() for r in caplog.records if "model output" in r.getMessage()]
    assert len(announced) == 1 and "POST /v1/completions" in announced[0], "announced once, on stderr"

    by_trace = {records[0]["trace_id"]: records for records in trace_records(tmp_path)}
    counting = by_trace["counting"]
    assert [r["kind"] for r in counting if r["kind"] in ("http_exchange", "model_call")] == [
        "http_exchange", "model_call"], "the named session holds its token count and its model call"
    (count,) = of_kind(counting, "http_exchange")
    assert (count["method"], count["path"], count["status"]) == ("POST", "/v1/messages/count_tokens", 200)
    assert count["request"]["messages"] == HELLO and count["response"] == {"input_tokens": recorded[0]}
    assert count["request_headers"]["authorization"] == "[REDACTED]", "the SDK sends its key as a bearer token"
    side = next(records for trace_id, records in by_trace.items() if trace_id.endswith("other-routes"))
    exchanges = of_kind(side, "http_exchange")
    assert [(e["method"], e["path"]) for e in exchanges] == [
        ("GET", "/v1/models"), ("GET", "/v1/models"), ("POST", "/v1/completions")]
    completion = exchanges[-1]
    assert completion["model_output"] is True and "北京" in completion["response_raw"]
    assert completion["request_key"] == route_key("POST", "/v1/completions", completion["request"])

    with replaying(tmp_path) as proxy:
        assert _sdk_calls(proxy.url) == recorded
        assert proxy.proxy.misses == []


def test_a_route_never_recorded_is_a_replay_miss_in_the_clients_error_shape(tmp_path: Path) -> None:
    with recording(["好"], tmp_path) as proxy:
        _anthropic(proxy.url).messages.count_tokens(model="claude-fake", messages=HELLO)
    with replaying(tmp_path) as proxy, pytest.raises(anthropic.NotFoundError) as missed:
        _anthropic(proxy.url).messages.count_tokens(model="claude-fake", messages=[{"role": "user", "content": "别的"}])
    assert "no recording matches POST /v1/messages/count_tokens" in str(missed.value)
    assert "1 other requests to this route are recorded" in str(missed.value)
    assert missed.value.response.headers["x-should-retry"] == "false"


def _record_process(upstream: str, out: Path) -> subprocess.Popen[str]:
    command = ["tracekit", "record", "--upstream", upstream, "--port", "0", "--out", str(out)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_tracekit_record_says_at_exit_what_it_wrote(tmp_path: Path) -> None:
    with RoutesUpstream([text_reply("你好！")]) as upstream:
        process = _record_process(upstream.url, tmp_path)
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        _sdk_calls(url)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)  # a bound against a hang, not a margin
    assert process.returncode == 0
    assert "POST /v1/completions answers with model output that tracekit does not read" in stderr
    assert (f"tracekit record: wrote 1 sessions, 5 exchanges in {tmp_path} (4 to other routes, 1 with model output "
            "tracekit does not read); analyze does not see those") in stderr


def test_an_empty_recording_says_so(tmp_path: Path) -> None:
    with FakeUpstream([]) as upstream:
        process = _record_process(upstream.url, tmp_path)
        assert process.stdout is not None
        process.stdout.readline()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)  # a bound against a hang, not a margin
    assert "wrote 0 sessions, 0 exchanges" in stderr and "no request reached the proxy" in stderr
