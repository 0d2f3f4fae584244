"""The OpenAI Responses API's WebSocket mode through ``tracekit record`` to the fake upstream, then through
``tracekit replay`` with the upstream gone.

Two real clients on loopback:

- the openai Python SDK's ``client.responses.connect()`` (openai 3.63: a ``websockets`` connection to
  ``ws://HOST/v1/responses`` sending ``response.create`` events; it exists in the locked version);
- aiohttp's WebSocket client sending what the Codex CLI sends (``codex-rs/codex-api/src/common.rs`` and
  ``endpoint/responses_websocket.rs`` in openai/codex: a ``response.create`` event with ``stream: true``,
  ``store: false``, ``client_metadata`` and ``previous_response_id`` with only the new items on the same
  socket, then a ``response.processed`` event that gets no answer).

Each ``response.create`` must be one model call in one trace, as its HTTP form would be; replay must give the
client the same frames.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import aiohttp.web
import openai
import pytest

from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.testing import FakeUpstream, ToolUse, by_turn, error_reply, text_reply, tool_use_reply

from .helpers import of_kind, recording, replaying, trace_records
from .test_responses_record_replay import FINAL, TOOLS, WEATHER, assert_weather_session, chained_loop, weather_script

KEY = "sk-ws-secret-0123456789abcdef0123"


def socket_loop(client: openai.OpenAI) -> list[dict[str, Any]]:
    """The weather agent over one socket: ``previous_response_id`` and only the new items each turn."""
    results: list[dict[str, Any]] = []
    new: list[Any] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    previous = None
    with client.responses.connect() as connection:
        for _ in range(5):
            event: dict[str, Any] = {"model": "gpt-test", "input": new, "tools": TOOLS}
            if previous is not None:
                event["previous_response_id"] = previous
            connection.response.create(**event)
            for server_event in connection:
                if server_event.type == "response.completed":
                    response = server_event.response
                    break
            results.append(response.to_dict(mode="json", exclude_none=True))
            calls = [item for item in response.output if item.type == "function_call"]
            new = [{"type": "function_call_output", "call_id": call.call_id,
                    "output": WEATHER[json.loads(call.arguments)["city"]]} for call in calls]  # fmt: skip
            previous = response.id
            if not new:
                break
    return results


def test_the_sdk_socket_session_is_one_trace_and_replays_equal(tmp_path: Path) -> None:
    with recording(weather_script(), tmp_path) as (upstream, proxy):
        recorded = socket_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key=KEY))
        assert [r.method for r in upstream.requests] == ["WS", "WS", "WS"], "the frames went upstream"
    (records,) = trace_records(tmp_path)
    assert_weather_session(records)
    calls = of_kind(records, "model_call")
    assert all(c["websocket"] is True and c["status"] == 200 for c in calls)
    assert [c["stitched"] for c in calls] == ["new", "thread", "thread"]
    assert calls[0]["sse"].startswith("event: response.created\ndata: {")
    assert "type" not in calls[0]["request"], "the request is the event without its type, as its HTTP form"
    assert KEY not in "".join(p.read_text("utf-8") for p in tmp_path.rglob("*") if p.is_file())

    with replaying(tmp_path) as proxy:
        replayed = socket_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-other"))
        assert proxy.proxy.misses == [] and proxy.proxy.matches["exact"] == 3
    assert replayed == recorded
    assert replayed[-1]["output"][0]["content"][0]["text"] == FINAL


async def codex_like(url: str, headers: dict[str, str]) -> tuple[list[list[str]], int]:
    """What the Codex CLI sends on its socket, turn by turn; the frames each turn got, and the upgrade status."""
    turns: list[list[str]] = []
    command = {"type": "array", "items": {"type": "string"}}
    tool = {"type": "function", "name": "shell", "description": "Runs a command.", "strict": False,
            "parameters": {"type": "object", "properties": {"command": command}}}  # fmt: skip
    base = {"type": "response.create", "model": "gpt-test", "instructions": "You are Codex.", "tools": [tool],
            "tool_choice": "auto", "parallel_tool_calls": False, "reasoning": None, "store": False, "stream": True,
            "include": [], "prompt_cache_key": "0199-cache",
            "client_metadata": {"x-codex-turn-metadata": "{}"}}  # fmt: skip
    new: list[Any] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]}]
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "/v1/responses", headers=headers) as ws:
        status = ws._response.status
        previous = None
        for _ in range(3):
            event = {**base, "input": new, **({"previous_response_id": previous} if previous else {})}
            await ws.send_str(json.dumps(event))
            frames: list[str] = []
            while True:
                message = await ws.receive(timeout=10)
                assert message.type == aiohttp.WSMsgType.TEXT, message
                frames.append(message.data)
                kind = json.loads(message.data)["type"]
                if kind in ("response.completed", "error"):
                    break
            turns.append(frames)
            last = json.loads(frames[-1])
            if last["type"] == "error":
                break
            previous = last["response"]["id"]
            await ws.send_str(json.dumps({"type": "response.processed", "response_id": previous}))
            calls = [item for item in last["response"]["output"] if item["type"] == "function_call"]
            if not calls:
                break
            new = [{"type": "function_call_output", "call_id": calls[0]["call_id"], "output": "README.md\n"}]
    return turns, status


def codex_script() -> Any:
    return by_turn([tool_use_reply(ToolUse("shell", {"command": ["ls"]})), text_reply("只有 README.md。")])


def test_codex_frames_are_recorded_and_replayed_frame_for_frame(tmp_path: Path) -> None:
    headers = {"authorization": f"Bearer {KEY}", "session_id": "0199aa", "originator": "codex_exec"}
    with recording(codex_script(), tmp_path) as (upstream, proxy):
        recorded, status = asyncio.run(codex_like(proxy.url, headers))
        assert status == 101
        # (the fake reads a socket's frames in order: the first one came before the second response.create)
        assert upstream.socket_events[0] == {"type": "response.processed", "response_id": "resp_fake_0001"}
        assert upstream.requests[0].headers["authorization"] == f"Bearer {KEY}", "the key reached the upstream"
    assert len(recorded) == 2 and json.loads(recorded[-1][-1])["response"]["output"][0]["content"][0]["text"] == \
        "只有 README.md。"  # fmt: skip
    (records,) = trace_records(tmp_path)
    assert [(c["name"], c["input"]) for c in of_kind(records, "tool_call")] == [("shell", {"command": ["ls"]})]
    assert [r["content"] for r in of_kind(records, "tool_result")] == ["README.md\n"]
    assert KEY not in "".join(p.read_text("utf-8") for p in tmp_path.rglob("*") if p.is_file())

    with replaying(tmp_path) as proxy:
        replayed, status = asyncio.run(codex_like(proxy.url, headers))
        assert status == 101 and proxy.proxy.misses == []
    assert replayed == recorded, "the same frames, byte for byte"


def test_a_replay_miss_is_an_error_frame_naming_the_nearest_recording(tmp_path: Path) -> None:
    with recording(weather_script(), tmp_path) as (_, proxy):
        socket_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k"))
    with replaying(tmp_path) as proxy:
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k")
        with client.responses.connect() as connection:
            connection.response.create(model="gpt-test", input="换一个问题", tools=TOOLS)
            event = next(iter(connection))
        assert event.type == "error"
        assert "Nearest recorded request" in event.error.message and len(proxy.proxy.misses) == 1


def test_an_upstream_error_frame_is_recorded_as_that_http_error(tmp_path: Path) -> None:
    script = [error_reply(429, "rate_limit_error", "slow down"), text_reply("好")]
    with recording(script, tmp_path) as (_, proxy):
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k")
        with client.responses.connect() as connection:
            kinds = []
            for _ in range(2):
                connection.response.create(model="gpt-test", input="你好")
                for event in connection:
                    kinds.append(event.type)
                    if event.type in ("error", "response.completed"):
                        break
    assert kinds[0] == "error" and kinds[-1] == "response.completed"
    records = [r for trace in trace_records(tmp_path) for r in trace]
    errors = of_kind(records, "error") + [c for c in of_kind(records, "model_call") if c.get("error")]
    assert any(e.get("status") == 429 for e in errors), errors


def test_a_refused_upgrade_reaches_the_client_with_its_status(tmp_path: Path) -> None:
    """An upstream that does not speak the WebSocket mode: the client sees its 404 (and can fall back)."""

    async def run(url: str) -> int:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(url + "/v1/chat/completions")
            return refused.value.status

    with FakeUpstream([]) as upstream, RunningProxy(ProxyConfig(upstream=upstream.url, out_dir=tmp_path)) as proxy:
        assert asyncio.run(run(proxy.url)) == 404


def test_another_websocket_is_relayed_frame_for_frame_and_recorded_raw(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A socket tracekit does not read (an echo server on /v1/realtime): frames pass unchanged both ways, the
    connection is one http_exchange record, and the proxy says so; replay refuses it with a 404."""

    async def echo(request: aiohttp.web.Request) -> aiohttp.web.WebSocketResponse:
        ws = aiohttp.web.WebSocketResponse()
        await ws.prepare(request)
        async for message in ws:
            if message.type == aiohttp.WSMsgType.TEXT:
                await ws.send_str("echo:" + message.data)
            elif message.type == aiohttp.WSMsgType.BINARY:
                await ws.send_bytes(message.data[::-1])
        return ws

    async def client(url: str) -> list[Any]:
        headers = {"authorization": f"Bearer {KEY}"}
        async with aiohttp.ClientSession() as session, session.ws_connect(url + "/v1/realtime?model=m",
                                                                          headers=headers) as ws:  # fmt: skip
            await ws.send_str("你好")
            text = (await ws.receive(timeout=10)).data
            await ws.send_bytes(b"\x00\x01\xff")
            data = (await ws.receive(timeout=10)).data
            return [text, data]

    async def scenario() -> list[Any]:
        app = aiohttp.web.Application()
        app.router.add_get("/v1/realtime", echo)
        runner = aiohttp.web.AppRunner(app)
        await runner.setup()
        site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        proxy = RunningProxy(ProxyConfig(upstream=f"http://127.0.0.1:{port}", out_dir=tmp_path))
        await asyncio.to_thread(proxy.start)
        try:
            return await client(proxy.url)
        finally:
            await asyncio.to_thread(proxy.close)
            await runner.cleanup()

    with caplog.at_level("WARNING"):
        assert asyncio.run(scenario()) == ["echo:你好", b"\xff\x01\x00"]
    assert "relayed frame by frame" in caplog.text
    [record] = [r for trace in trace_records(tmp_path) for r in trace if r["kind"] == "http_exchange"]
    assert record["status"] == 101 and record["path"] == "/v1/realtime" and record["query"] == "model=m"
    assert record["response"]["frames"] == [{"from": "client", "text": "你好"}, {"from": "server", "text": "echo:你好"},
                                            {"from": "client", "base64": "AAH/"}, {"from": "server", "base64": "/wEA"}]
    assert KEY not in "".join(p.read_text("utf-8") for p in tmp_path.rglob("*") if p.is_file())

    async def refused(url: str) -> int:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.WSServerHandshakeError) as error:
                await session.ws_connect(url + "/v1/realtime")
            return error.value.status

    with replaying(tmp_path) as proxy:
        assert asyncio.run(refused(proxy.url)) == 404


def test_an_http_recording_answers_the_same_session_over_a_socket(tmp_path: Path) -> None:
    with recording(weather_script(), tmp_path) as (_, proxy):
        over_http = chained_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k"), True)
    with replaying(tmp_path) as proxy:
        over_socket = socket_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k"))
        assert proxy.proxy.misses == []
    assert over_socket == over_http
