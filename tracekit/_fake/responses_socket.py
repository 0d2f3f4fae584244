"""The fake upstream's Responses API WebSocket mode: ``GET /v1/responses`` upgraded to a WebSocket.

The protocol, as the API reference ("WebSocket mode", "WebSocket events") and the Codex CLI
(``codex-rs/codex-api/src/endpoint/responses_websocket.rs`` in openai/codex) use it:

- the client sends JSON text frames; a ``response.create`` event carries the same top-level fields as a
  ``POST /v1/responses`` body (``stream`` is implicit; Codex sends it anyway), plus ``type``;
- the server answers each ``response.create`` with the events the HTTP stream would carry, one JSON text
  frame each (``response.created`` ... ``response.completed``/``response.incomplete``/``response.failed``);
- an error is one ``error`` frame with the HTTP ``status`` beside the ``error`` object (Codex reads
  ``status`` to treat it as that HTTP error); the connection stays open;
- ``generate: false`` is a warm-up (Codex sends one first, its ``request_kind`` "prewarm"): the response
  has no output, and a later event may continue it (the guide "WebSocket mode", "warm up request state");
  it takes no reply from the script;
- a connection keeps the responses it produced, ``store`` or not, so ``previous_response_id`` continues
  them (the API's connection-local cache); here the fake's one store holds them.

Each ``response.create`` is one ``FakeRequest`` (method ``WS``, the upgrade's headers, ``body`` the event
without ``type`` and with ``stream: true``), answered from the same script as HTTP requests. Other client
events (``response.processed``, ...) are appended to ``FakeUpstream.socket_events`` and not answered.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import WSMsgType, web

from tracekit._fake import responses_wire
from tracekit._fake.openai_wire import error_object
from tracekit._fake.replies import ConnectionReset, ErrorReply, Reply, error_reply, message_reply
from tracekit._fake.request import FakeRequest
from tracekit.providers.sse import parse_sse

if TYPE_CHECKING:  # (the server imports this module)
    from tracekit._fake.server import FakeUpstream

CREATE_EVENT = "response.create"


def error_frame(error: ErrorReply) -> str:
    """``error`` as the one ``error`` frame the WebSocket mode sends for a failed request."""
    return orjson.dumps({"type": "error", "status": error.status, "error": error_object(error)}).decode()


async def serve_socket(up: FakeUpstream, request: web.Request) -> web.StreamResponse:
    """Serve one Responses API WebSocket until the client closes it."""
    socket = web.WebSocketResponse(autoping=True, max_msg_size=64 * 1024 * 1024)
    await socket.prepare(request)
    headers: dict[str, str] = {}
    for name, value in request.headers.items():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    async for message in socket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            event = orjson.loads(message.data)
        except orjson.JSONDecodeError:
            event = None
        if not isinstance(event, dict) or event.get("type") != CREATE_EVENT:
            up.socket_events.append(event)
            if not isinstance(event, dict) or not isinstance(event.get("type"), str):
                error = error_reply(400, "invalid_request_error", "a client event must be a JSON object with a type",
                                    should_retry=False)  # fmt: skip
                await socket.send_str(error_frame(error))
            continue
        body = {key: value for key, value in event.items() if key != "type"}
        body["stream"] = True
        fake = FakeRequest(index=len(up.requests), method="WS", path=request.path, headers=headers, body=body,
                           raw=message.data.encode(), provider="openai_responses",
                           query=dict(request.query))  # fmt: skip
        up.requests.append(fake)
        if not await _answer(up, socket, fake):
            break
    return socket


async def _answer(up: FakeUpstream, socket: web.WebSocketResponse, fake: FakeRequest) -> bool:
    """Answer one ``response.create``; False when the script reset the connection."""
    body: dict[str, Any] = fake.body
    fake.messages, missing = up.responses.resolve(body)
    if missing is not None:
        await socket.send_str(error_frame(missing))
        return True
    try:
        reply: Reply = message_reply() if body.get("generate") is False else up.script.next_reply(fake)
    except Exception as exc:  # a user's script function: report it to the client and keep serving
        up.errors.append(exc)
        reply = error_reply(500, "api_error", f"tracekit fake upstream: the script function raised {exc!r}",
                            should_retry=False)  # fmt: skip
    if isinstance(reply, ConnectionReset):
        await asyncio.sleep(reply.first_byte_delay)
        await socket.close()
        return False
    if reply.first_byte_delay > 0:
        await asyncio.sleep(reply.first_byte_delay)
    if isinstance(reply, ErrorReply):
        await socket.send_str(error_frame(reply))
        return True
    wire = responses_wire.render_message(reply, fake, up.ids)
    frames = [event.data for frame in wire.events or [] for event in parse_sse(frame)]
    if wire.cut_event_at is not None:  # a stream cut: the connection drops mid-response
        for data in frames[: wire.cut_event_at]:
            await socket.send_str(data)
        await socket.close()
        return False
    for index, data in enumerate(frames):
        if index > 0 and reply.event_delay > 0:
            await asyncio.sleep(reply.event_delay)
        if index == len(frames) - 1 and wire.message is not None and reply.fault is None:
            up.responses.record({**body, "store": True}, fake.messages, wire.message)
        await socket.send_str(data)
    return True
