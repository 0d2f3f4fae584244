"""A Responses stream whose final event reaches the proxy in several chunks: ``response.completed`` carries
the whole response, so over a real network (TLS records, TCP reads) its last chunk often holds only the tail
of that JSON, without the event's name. The proxy must still advance the session before the client can see
that tail and send its next request.

The upstream here is a small aiohttp app: it sends the events ``render_stream`` makes for a fake-upstream
response, the final one in two writes, and ends the stream only once the client's next request has come
(an upstream that is slow to close, as real ones can be). The client acts on ``response.completed`` as soon
as it has it, without waiting for the end of the body. A proxy that passed the tail on before parsing it
would take that next request as a new session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
import orjson
from aiohttp import web

from tracekit.loop_thread import LoopThread
from tracekit.providers import openai_responses, parse_sse
from tracekit.providers.sse import encode_json_event
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor

from .helpers import of_kind, trace_records


def answer_body(turn: int) -> dict[str, Any]:
    text = f"第 {turn} 轮的回答。" * 200
    return openai_responses.canonical_to_response(
        {"role": "assistant", "content": [{"type": "text", "text": text}]}, model="gpt-test")


@contextmanager
def splitting_upstream() -> Iterator[str]:
    """The upstream described in the module docstring; yields its base URL."""
    requests: list[asyncio.Event] = []

    async def responses(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        turn = len(requests)
        requests.append(asyncio.Event())
        if turn > 0:
            requests[turn - 1].set()  # the client's next request came: the previous stream may end
        frames = [encode_json_event(event.json(), event.event)
                  for event in parse_sse(openai_responses.render_stream(answer_body(turn)))]  # fmt: skip
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        for frame in frames[:-1]:
            await response.write(frame)
        final = frames[-1]
        await response.write(final[: len(final) // 2])
        await asyncio.sleep(0.05)  # two TCP reads for the proxy, as over a real network
        await response.write(final[len(final) // 2 :])
        if body.get("stream") and turn < 2:  # the last turn has no next request to wait for
            with contextlib.suppress(asyncio.TimeoutError):  # a safety net: the next request ends the wait
                await asyncio.wait_for(requests[turn].wait(), timeout=5)
        with contextlib.suppress(ConnectionError):  # the proxy passed the end on and its client has gone
            await response.write_eof()
        return response

    async def start() -> web.AppRunner:
        app = web.Application()
        app.router.add_post("/v1/responses", responses)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner

    thread = LoopThread("split-upstream")
    runner = thread.run(start(), timeout=10)
    try:
        port = runner.addresses[0][1]
        yield f"http://127.0.0.1:{port}"
    finally:
        thread.stop(runner.cleanup(), timeout=10)


def test_a_final_event_split_across_chunks_still_advances_the_session_first(tmp_path: Path) -> None:
    with splitting_upstream() as upstream, RunningProxy(
        ProxyConfig(upstream=upstream, out_dir=tmp_path, redactor=Redactor())
    ) as proxy:
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0)
        items: list[Any] = [{"role": "user", "content": "你好"}]
        for turn in range(3):
            # Like an agent that acts on the final event without waiting for the end of the body.
            for event in client.responses.create(model="gpt-test", input=items, stream=True):
                if event.type == "response.completed":
                    response = event.response
                    break
            assert response.output_text.startswith(f"第 {turn} 轮")
            items += [item.to_dict(exclude_none=True) for item in response.output]
            items.append({"role": "user", "content": f"继续 {turn}"})
        proxy.wait_written()
    (records,) = trace_records(tmp_path)
    calls = of_kind(records, "model_call")
    assert [c["stitched"] for c in calls] == ["new", "continuity", "continuity"]
    assert all(orjson.loads(orjson.dumps(c["response"]))["status"] == "completed" for c in calls)
