"""The fake upstream's Responses API WebSocket mode, spoken to by aiohttp's WebSocket client: a warm-up
(``generate: false``) takes no scripted reply and can be continued; an unknown ``previous_response_id`` and a
scripted error are one ``error`` frame with the HTTP status; a non-JSON event is answered with an error."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from tracekit.testing import FakeUpstream, error_reply, text_reply


async def exchange(url: str, events: list[Any]) -> list[list[dict[str, Any]]]:
    """Send each event; the frames answering it, up to the end of its response (or its error)."""
    answers = []
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "/v1/responses") as ws:
        for event in events:
            await ws.send_str(event if isinstance(event, str) else json.dumps(event))
            frames = []
            while True:
                frame = json.loads((await ws.receive(timeout=10)).data)
                frames.append(frame)
                if frame["type"] in ("response.completed", "error"):
                    break
            answers.append(frames)
    return answers


def test_warm_up_continuation_and_errors() -> None:
    with FakeUpstream([text_reply("你好"), error_reply(429, "rate_limit_error", "slow down")]) as up:
        warm, answer, unknown, limited, bad = asyncio.run(exchange(up.url, [
            {"type": "response.create", "model": "m", "input": "hi", "store": False, "generate": False},
            {"type": "response.create", "model": "m", "input": "hi", "store": False,
             "previous_response_id": "resp_fake_0001"},
            {"type": "response.create", "model": "m", "input": "hi", "previous_response_id": "resp_nope"},
            {"type": "response.create", "model": "m", "input": "hi"},
            "not json",
        ]))  # fmt: skip
    assert warm[-1]["response"]["output"] == [] and warm[-1]["response"]["id"] == "resp_fake_0001"
    assert answer[-1]["response"]["output"][0]["content"][0]["text"] == "你好"
    assert up.requests[1].messages[0] == {"role": "user", "content": "hi"}, "continued from the warm-up"
    assert unknown == [{"type": "error", "status": 404, "error": unknown[0]["error"]}]
    assert unknown[0]["error"]["code"] == "previous_response_not_found"
    assert limited[0]["status"] == 429 and limited[0]["error"]["message"] == "slow down"
    assert bad[0]["status"] == 400 and up.socket_events == [None]
    assert [r.method for r in up.requests] == ["WS"] * 4 and up.requests[0].body["stream"] is True
