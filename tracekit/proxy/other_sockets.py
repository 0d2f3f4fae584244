"""WebSocket upgrades other than the Responses API's: relayed frame by frame, recorded as one record.

``record``: the upgrade goes to the upstream (a refusal reaches the client with its status), then every text
and binary frame is passed on unchanged in both directions until either side closes (pings are answered on
each side of the proxy). The connection is written as one ``http_exchange`` record (``GET``, the path, status
101, the request headers with secret values replaced) whose ``response`` holds the frames in order,
``{"from": "client"|"server", "text": ...}`` or ``{"from": ..., "base64": ...}``, the first
``max_kept_stream_bytes`` of them (``truncated`` past them). The proxy says on stderr, once per path, that it
relays a socket it does not read. Replay does not answer these sockets: the upgrade gets a 404 saying so.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import WSMsgType, web

from tracekit.proxy.headers import SESSION_HEADER, recorded_request_headers
from tracekit.proxy.other_routes import public_query
from tracekit.proxy.refusals import error_response, provider_for_request
from tracekit.proxy.request import clean_headers, clean_text
from tracekit.trace import HttpExchange

if TYPE_CHECKING:  # (the server module imports this one)
    from tracekit.proxy.server import Proxy

log = logging.getLogger(__name__)

class _Frames:
    """The frames of one socket, up to ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.kept: list[dict[str, str]] = []
        self.size = 0
        self.limit = limit
        self.truncated = False

    def add(self, side: str, message: aiohttp.WSMessage) -> None:
        data = message.data
        size = len(data)
        if self.truncated or self.size + size > self.limit:
            self.truncated = True
            return
        self.size += size
        if message.type == WSMsgType.TEXT:
            self.kept.append({"from": side, "text": data})
        else:
            self.kept.append({"from": side, "base64": base64.b64encode(data).decode("ascii")})


async def _pump(source: Any, target: Any, side: str, frames: _Frames) -> None:
    """Pass ``source``'s text and binary frames on to ``target`` until ``source`` closes."""
    async for message in source:
        if message.type in (WSMsgType.TEXT, WSMsgType.BINARY):
            frames.add(side, message)
            if message.type == WSMsgType.TEXT:
                await target.send_str(message.data)
            else:
                await target.send_bytes(message.data)


async def relay_socket(proxy: Proxy, request: web.Request) -> web.StreamResponse:
    """Relay one WebSocket upgrade to a route tracekit does not read (see the module docstring)."""
    headers = clean_headers(request.headers.items())
    proxy.learn_secrets(request, headers)
    await proxy.scrub_if_learnt()
    provider = provider_for_request(request.path, headers)
    if proxy.upstream is None:
        message = (f"tracekit replay: a WebSocket on {request.path} is not replayed (replay answers the Responses "
                   "API's WebSocket mode only)")  # fmt: skip
        proxy.misses.append(message)
        log.warning("%s", message)
        return error_response(provider, 404, message)
    t_wall, t0 = time.time(), time.perf_counter()
    try:
        upstream = await proxy.upstream.socket(request.path, request.query_string, headers)
    except aiohttp.WSServerHandshakeError as exc:
        return error_response(provider, exc.status or 502, f"tracekit proxy: the upstream refused the WebSocket "
                              f"upgrade: {exc.message}")  # fmt: skip
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
        return error_response(provider, 502, f"tracekit proxy: cannot open the WebSocket upstream: {exc!r}")
    path = clean_text(request.path)
    if proxy.other_routes.first_time("GET", path):
        log.warning("tracekit: a WebSocket on GET %s is relayed frame by frame and recorded raw; tracekit does not "
                    "read it as model calls", path)  # fmt: skip
    client = web.WebSocketResponse(protocols=[upstream.protocol] if upstream.protocol else ())
    await client.prepare(request)
    frames = _Frames(proxy.config.max_kept_stream_bytes)
    pumps = [asyncio.create_task(_pump(client, upstream, "client", frames)),
             asyncio.create_task(_pump(upstream, client, "server", frames))]  # fmt: skip
    try:
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pump in pumps:
            pump.cancel()
        await upstream.close()
        await client.close()
        _record(proxy, request, path, headers, frames, t_wall, t0)
    return client


def _record(proxy: Proxy, request: web.Request, path: str, headers: dict[str, str], frames: _Frames,
            t_wall: float, t0: float) -> None:  # fmt: skip
    recorder = proxy.tracker.recorder
    if recorder is None:
        return
    record = HttpExchange(
        t=t_wall, method="GET", path=path, query=public_query(clean_text(request.query_string)), status=101,
        request_headers=recorded_request_headers(headers) or None, response={"frames": frames.kept},
        latency_ms=round((time.perf_counter() - t0) * 1000, 3), **({"truncated": True} if frames.truncated else {}),
    )  # fmt: skip
    named = headers.get(SESSION_HEADER)
    redactor = proxy.config.redactor
    session = proxy.tracker.registry.named_session(named, redactor.redact_text(named)) if named else None
    recorder.record_other(session, record)
