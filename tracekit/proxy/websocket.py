"""The OpenAI Responses API's WebSocket mode through the proxy.

The protocol (API reference, "WebSocket mode" and "WebSocket events"; the Codex CLI's client,
``codex-rs/codex-api/src/endpoint/responses_websocket.rs`` in openai/codex): the client upgrades
``GET /v1/responses`` and sends JSON text frames. A ``response.create`` event carries the same top-level
fields as a ``POST /v1/responses`` body, plus ``type``; the server answers it with the events the HTTP
stream carries, one JSON text frame each, up to ``response.completed`` (``.incomplete``, ``.failed``), or
with one ``error`` frame whose ``status`` is the HTTP status the request would have had. Codex sends
other events too (``response.processed``); they get no answer.

Record: the upgrade goes to the upstream first, so that a refusal (401, 404, ...) reaches the client with
its status and a client that falls back to HTTP does. Then frames are relayed both ways. Each
``response.create`` is one exchange, as its HTTP form would be: the request is the event without ``type``,
the answer the server's frames up to the end of the response, kept as the SSE text the HTTP stream carries
(``event: NAME`` / ``data: FRAME``), and the model call is marked ``websocket: true``. Intercepts, faults and
the live guard apply as to HTTP; the exchange is recorded and its session advanced before the client gets
the final frame.

Replay: the proxy accepts the upgrade itself and answers each ``response.create`` from the recordings with
the same ladder as HTTP (``tracekit.proxy.matching``), as frames; a miss is an ``error`` frame with
``status`` 404 naming the nearest recording. With ``on_miss="record"`` a miss opens the upstream socket.

Several ``response.create`` events in flight on one socket are answered in order (``stream_id`` lanes are
not told apart).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
from aiohttp import WSMsgType, web

from tracekit.providers.base import Provider
from tracekit.providers.sse import EventSplitter, encode_event, parse_sse
from tracekit.proxy.answers import Answer, json_answer
from tracekit.proxy.exchange import Exchange, StreamTee
from tracekit.proxy.headers import client_response_headers, kept_response_headers
from tracekit.proxy.observers import watch_request
from tracekit.proxy.refusals import error_response
from tracekit.proxy.request import clean_headers, read_request

if TYPE_CHECKING:  # (the server module imports this one)
    from tracekit.proxy.server import Proxy

log = logging.getLogger(__name__)

CREATE_EVENT = "response.create"
#: Server events that end a response (``error`` ends the request that failed).
ENDING_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})
#: Handshake headers each side of the proxy makes for itself.
_HANDSHAKE_HEADERS = frozenset({"sec-websocket-accept", "sec-websocket-extensions", "sec-websocket-key",
                                "sec-websocket-protocol", "sec-websocket-version"})  # fmt: skip


def is_websocket_upgrade(request: web.Request) -> bool:
    """Whether ``request`` asks to become a WebSocket (RFC 6455 section 4.1)."""
    return request.method == "GET" and request.headers.get("upgrade", "").strip().lower() == "websocket"


def error_frame(status: int, body: Any) -> str:
    """An error answer as the WebSocket mode's ``error`` frame (``status`` beside the ``error`` object)."""
    error = body.get("error", body) if isinstance(body, dict) else {"message": str(body)}
    return orjson.dumps({"type": "error", "status": status, "error": error}).decode()


class ResponsesSocket:
    """One client's Responses API WebSocket through the proxy (see the module docstring)."""

    def __init__(self, proxy: Proxy, request: web.Request, provider: Provider) -> None:
        self.proxy = proxy
        self.request = request
        self.provider = provider
        self.headers = clean_headers(request.headers.items())
        # A client event is a request body: the proxy's body limit is its limit too.
        self.client = web.WebSocketResponse(protocols=_protocols(request), autoping=True,
                                            max_msg_size=proxy.config.max_body_bytes)  # fmt: skip
        self.upstream: aiohttp.ClientWebSocketResponse | None = None
        self.kept_headers: dict[str, str] = {}
        self.pending: deque[Exchange] = deque()
        """Exchanges sent upstream whose response has not ended, in order."""
        self._reader: asyncio.Task[None] | None = None

    async def serve(self) -> web.StreamResponse:
        """Serve the socket until either side closes it."""
        proxy = self.proxy
        proxy.learn_secrets(self.request, self.headers)
        await proxy.scrub_if_learnt()
        if proxy.index is None:  # record: the upstream answers the upgrade first
            refused = await self._connect()
            if refused is not None:
                return refused
        await self.client.prepare(self.request)
        ending = "client_gone"
        try:
            async for message in self.client:
                if message.type == WSMsgType.TEXT:
                    await self._from_client(message.data)
                elif message.type == WSMsgType.BINARY and self.upstream is not None:
                    await self.upstream.send_bytes(message.data)
        except asyncio.CancelledError:
            ending = "cancelled" if proxy.stopping else "client_gone"
            raise
        finally:
            await self._close(ending)
        return self.client

    async def _connect(self) -> web.Response | None:
        """Open the upstream socket; the error response to give the client when that fails."""
        upstream = self.proxy.upstream
        if upstream is None:
            return error_response(self.provider, 502, "tracekit proxy: no upstream to open the WebSocket to")
        try:
            self.upstream = await upstream.socket(self.request.path, self.request.query_string, self.headers)
        except aiohttp.WSServerHandshakeError as exc:
            log.warning("tracekit: the upstream refused the WebSocket upgrade of %s: %s %s", self.request.path,
                        exc.status, exc.message)  # fmt: skip
            headers = client_response_headers(exc.headers or {})
            headers.popall("content-type", None)
            message = f"tracekit proxy: the upstream refused the WebSocket upgrade: {exc.message}"
            response = error_response(self.provider, exc.status or 502, message)
            response.headers.extend(headers)
            return response
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            message = f"tracekit proxy: cannot open the WebSocket upstream: {exc!r}"
            return error_response(self.provider, 502, message)
        handshake = self.upstream._response.headers  # the upgrade's response headers (not public in aiohttp)
        for name, value in client_response_headers(handshake).items():
            if not self.client.prepared and name.lower() not in _HANDSHAKE_HEADERS and name not in self.client.headers:
                self.client.headers[name] = value
        self.kept_headers = kept_response_headers(handshake.items())
        self._reader = asyncio.create_task(self._from_upstream())
        return None

    # -- client to upstream ------------------------------------------------------------------------------

    async def _from_client(self, text: str) -> None:
        try:
            event = orjson.loads(text)
        except orjson.JSONDecodeError:
            event = None
        if isinstance(event, dict) and event.get("type") == CREATE_EVENT:
            await self._create(event, text)
        elif self.upstream is not None:
            await self.upstream.send_str(text)

    async def _create(self, event: dict[str, Any], text: str) -> None:
        proxy = self.proxy
        raw = orjson.dumps({key: value for key, value in event.items() if key != "type"})
        parsed = read_request(self.request.path, self.request.query_string, self.headers, raw, self.provider,
                              resolve=proxy.tracker.output_items.resolve)
        # The socket keeps its responses in memory, ``store: false`` or not: a later event may continue them.
        parsed = replace(parsed, continuation=parsed.continuation._replace(kept=True))
        proxy.learn_fields(parsed.body)
        await proxy.scrub_if_learnt()
        exchange = Exchange(parsed, proxy.tracker.begin(parsed), websocket=True)
        if proxy.config.observer is not None:
            watch_request(proxy.config.observer, exchange)
        received = exchange.received
        received.status, received.answered, received.headers = 200, True, dict(self.kept_headers)
        received.tee = StreamTee(self.provider, exchange.t0, proxy.config.max_kept_stream_bytes)
        answer = proxy.local_answer(exchange, stream=True)
        if answer is None and self.upstream is None:
            refused = await self._connect()
            if refused is not None:
                answer = json_answer(refused.status, orjson.loads(refused.body or b"{}"))  # type: ignore[arg-type]
        if answer is not None:
            await self._answer_locally(exchange, answer)
            return
        assert self.upstream is not None
        sent = exchange.turn.sent
        self.pending.append(exchange)
        if sent.raw != raw:  # an intercept rewrote the request
            text = orjson.dumps({"type": CREATE_EVENT, **sent.body}).decode()
        await self.upstream.send_str(text)

    async def _answer_locally(self, exchange: Exchange, answer: Answer) -> None:
        """Answer from a recording, a fault, a refusal or a miss, as frames."""
        received = exchange.received
        received.status = answer.status
        try:
            if answer.failure is not None:
                received.fail(answer.failure, answer.failure_detail or answer.failure)
                self.proxy.tracker.complete(exchange)
                await self.client.close()
                return
            if not answer.streamed:
                body = await answer.read()
                received.tee, received.body = None, body
                received.t_first = received.t_end = time.perf_counter()
                self.proxy.tracker.complete(exchange)
                await self.client.send_str(error_frame(answer.status, orjson.loads(body or b"{}")))
                return
            splitter = EventSplitter()
            async for chunk in answer.chunks():
                for event in splitter.feed(chunk):
                    for parsed in parse_sse(event):
                        await self._server_frame(exchange, parsed.data)
            if received.t_end is None:
                received.fail("cut", "the recorded stream ended before the response did")
                self.proxy.tracker.complete(exchange)
                await self.client.close()
        except (ConnectionError, asyncio.CancelledError):
            if received.t_end is None:  # the client went away mid-answer: the exchange is recorded as cut short
                received.client_gone = True
                received.t_end = time.perf_counter()
                self.proxy.tracker.complete(exchange)
            raise
        finally:
            answer.close()

    # -- upstream to client ------------------------------------------------------------------------------

    async def _from_upstream(self) -> None:
        assert self.upstream is not None
        try:
            async for message in self.upstream:
                if message.type == WSMsgType.TEXT:
                    exchange = self.pending[0] if self.pending else None
                    if exchange is None:
                        await self.client.send_str(message.data)
                    elif await self._server_frame(exchange, message.data):
                        self.pending.popleft()
                elif message.type == WSMsgType.BINARY:
                    await self.client.send_bytes(message.data)
        except (ConnectionError, aiohttp.ClientError):
            pass
        self._fail_pending("cut", "the upstream closed the WebSocket before the response ended")
        if not self.client.closed:
            code = self.upstream.close_code or aiohttp.WSCloseCode.GOING_AWAY
            await self.client.close(code=code)

    async def _server_frame(self, exchange: Exchange, text: str) -> bool:
        """Note one server event of ``exchange`` and pass it on; True when it ended the response (the exchange
        is then complete before the client sees the frame)."""
        received = exchange.received
        now = time.perf_counter()
        if received.t_first is None:
            received.t_first = now
        try:
            event = orjson.loads(text)
        except orjson.JSONDecodeError:
            event = None
        name = event.get("type") if isinstance(event, dict) else None
        assert received.tee is not None
        received.tee.feed(encode_event(text, event=name if isinstance(name, str) else None), now)
        ended = name in ENDING_EVENTS
        if ended:
            if name == "error" and isinstance(event, dict) and isinstance(event.get("status"), int):
                received.status = event["status"]
            received.t_end = now
            self.proxy.tracker.complete(exchange)
            await self.proxy.tracker.recorded(exchange)  # in the file before the client sees the end
        await self.client.send_str(text)
        return ended

    def _fail_pending(self, failure: str, detail: str) -> None:
        while self.pending:
            exchange = self.pending.popleft()
            received = exchange.received
            if failure == "client_gone":
                received.client_gone = True
            else:
                received.fail(failure, detail)
            received.t_end = time.perf_counter()
            self.proxy.tracker.complete(exchange)

    async def _close(self, ending: str) -> None:
        self._fail_pending(ending, "the proxy stopped before the response ended")
        if self._reader is not None:
            self._reader.cancel()
        if self.upstream is not None:
            await self.upstream.close()


def _protocols(request: web.Request) -> tuple[str, ...]:
    offered = request.headers.get("sec-websocket-protocol", "")
    return tuple(part.strip() for part in offered.split(",") if part.strip())
