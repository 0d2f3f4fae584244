"""The HTTP side: ``tracekit mcp record --upstream URL`` relays a streamable-HTTP MCP server, ``tracekit mcp replay
--port`` answers as one.

Streamable HTTP (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http):
the client POSTs each JSON-RPC message to the endpoint and gets ``application/json`` or a ``text/event-stream``
whose ``data:`` events carry the server's messages; ``GET`` opens a stream for server-initiated messages;
``DELETE`` ends the session; the server names the session in the ``Mcp-Session-Id`` response header to
``initialize`` and the client sends it back on every later request. The relay passes every request and
response on as it came (headers too, hop-by-hop ones excepted), streams SSE event by event, and shows each
message to the session's ``ToolSideRecorder`` (one trace per MCP session). Secret headers (``authorization``,
``cookie``, ...) are forwarded but never written: their values are registered with the redactor that every
record passes through. The older HTTP+SSE transport (2024-11-05: a ``GET`` event stream whose first event names
the ``POST`` endpoint, answers on the stream) is relayed and recorded the same way, path by path.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from tracekit.mcp.faults import ToolPolicy
from tracekit.mcp.jsonrpc import encode, parse_messages
from tracekit.mcp.recorder import ToolSideRecorder
from tracekit.mcp.replay import ReplayIndex, Responder
from tracekit.redact import SECRET_HEADERS, Redactor

SESSION_HEADER = "mcp-session-id"
#: Hop-by-hop headers (RFC 9110 section 7.6.1) are never forwarded; aiohttp frames bodies itself.
_NOT_FORWARDED = frozenset({
    "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade", "host", "content-length",
})  # fmt: skip


class Relay:
    """The recording relay in front of one upstream MCP endpoint."""

    def __init__(self, upstream: str, new_recorder: Callable[[str | None], ToolSideRecorder], redactor: Redactor):
        parts = urlsplit(upstream)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.endpoint = parts.path or "/"
        self._new_recorder = new_recorder
        self._redactor = redactor
        self.recorders: dict[str | None, ToolSideRecorder] = {}
        self._http: aiohttp.ClientSession | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Relay one request (any method, any path) to the upstream and its answer back."""
        if self._http is None:
            self._http = aiohttp.ClientSession(auto_decompress=False, timeout=aiohttp.ClientTimeout(total=None))
        headers = {}
        for name, value in request.headers.items():
            lower = name.lower()
            if lower in SECRET_HEADERS:
                self._redactor.add_secret(value)
            if lower not in _NOT_FORWARDED:
                headers[name] = value
        body = await request.read()
        session = request.headers.get(SESSION_HEADER)
        messages, _ = parse_messages(body) if body else ([], False)
        recorder = self._recorder_for(session, messages)
        for message in messages:
            decision = recorder.from_client(message, session)
            if decision.cut:
                assert request.transport is not None
                request.transport.close()  # the connection is cut mid-request: the client sees it drop
                raise web.HTTPBadRequest()  # not sent: the transport is already closed
            if decision.reply is not None and len(messages) == 1:
                if decision.delay_s:
                    await asyncio.sleep(decision.delay_s)  # an injected timeout answers late on purpose
                reply_headers = {SESSION_HEADER: session} if session else {}
                return web.Response(body=encode(decision.reply), content_type="application/json", headers=reply_headers)
        url = self.origin + request.path_qs
        async with self._http.request(request.method, url, headers=headers, data=body or None) as upstream:
            new_session = upstream.headers.get(SESSION_HEADER)
            if new_session and new_session not in self.recorders:
                self.recorders[new_session] = recorder
            passed = {k: v for k, v in upstream.headers.items() if k.lower() not in _NOT_FORWARDED}
            kind = upstream.headers.get("content-type", "")
            if kind.startswith("text/event-stream"):
                return await self._stream(request, upstream, passed, recorder, new_session or session)
            data = await upstream.read()
            if kind.startswith("application/json") and data:
                data = await self._server_body(data, recorder, new_session or session)
            passed.pop("Content-Encoding", None)
            return web.Response(status=upstream.status, body=data, headers=passed)

    def _recorder_for(self, session: str | None, messages: list[dict[str, Any]]) -> ToolSideRecorder:
        if any(message.get("method") == "initialize" for message in messages) or session not in self.recorders:
            recorder = self._new_recorder(session)
            self.recorders.setdefault(session, recorder)
            return recorder
        return self.recorders[session]

    async def _server_body(self, data: bytes, recorder: ToolSideRecorder, session: str | None) -> bytes:
        messages, batch = parse_messages(data)
        out, changed, delay = [], False, 0.0
        for message in messages:
            wait, relayed = recorder.from_server(message, session)
            delay = max(delay, wait)
            changed = changed or relayed is not message
            if relayed is not None:
                out.append(relayed)
        if delay:
            await asyncio.sleep(delay)  # a latency fault: the tool answers slowly on purpose
        if not changed:
            return data
        return encode(out if batch else out[0]) if out else b""

    async def _stream(self, request: web.Request, upstream: aiohttp.ClientResponse, headers: dict[str, str],
                      recorder: ToolSideRecorder, session: str | None) -> web.StreamResponse:  # fmt: skip
        response = web.StreamResponse(status=upstream.status, headers=headers)
        await response.prepare(request)
        event: list[bytes] = []
        async for line in upstream.content:
            event.append(line)
            if line.strip():
                continue
            await response.write(await self._event(event, recorder, session))  # one whole event at a time
            event = []
        if event:
            await response.write(b"".join(event))
        await response.write_eof()
        return response

    async def _event(self, lines: list[bytes], recorder: ToolSideRecorder, session: str | None) -> bytes:
        data = b"".join(line[5:].lstrip(b" ").rstrip(b"\r\n") for line in lines if line.startswith(b"data:"))
        if not data:
            return b"".join(lines)
        replaced = await self._server_body(data, recorder, session)
        if replaced == data:
            return b"".join(lines)
        kept = [line for line in lines if not line.startswith(b"data:") and line.strip()]
        return b"".join(kept) + b"data: " + replaced.rstrip(b"\n") + b"\n\n"

    async def close(self) -> None:
        """Close the upstream connections and every session's trace."""
        if self._http is not None:
            await self._http.close()
        for recorder in {id(r): r for r in self.recorders.values()}.values():
            recorder.close()


async def serve_record(upstream: str, host: str, port: int, out_dir: Path, policy: ToolPolicy, redactor: Redactor,
                       session: str | None, case_id: str | None, fsync: bool) -> None:  # fmt: skip
    """Serve the recording relay until interrupted; prints the listening line on stderr."""

    def new_recorder(mcp_session: str | None) -> ToolSideRecorder:
        fresh = ToolPolicy(policy.intercepts, policy.faults)  # call counts are per MCP session
        return ToolSideRecorder.open(out_dir, transport="streamable-http", upstream=upstream, session=session,
                                     case_id=case_id, policy=fresh, redactor=redactor, fsync=fsync)  # fmt: skip

    relay = Relay(upstream, new_recorder, redactor)
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", relay.handle)
    await _serve(app, host, port, "tracekit mcp record", relay.endpoint, relay.close)


async def serve_replay(index: ReplayIndex, recorder: ToolSideRecorder | None, host: str, port: int) -> None:
    """Answer streamable-HTTP MCP clients from recordings until interrupted (JSON responses, no GET stream)."""
    responder = Responder(index, recorder)

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.method == "DELETE":
            return web.Response(status=200)
        if request.method != "POST":
            return web.Response(status=405, headers={"Allow": "POST, DELETE"})  # no server-initiated stream
        messages, batch = parse_messages(await request.read())
        session = request.headers.get(SESSION_HEADER) or uuid.uuid4().hex
        replies: list[dict[str, Any]] = []
        for message in messages:
            decision, reply = responder.answer(message, session)
            if decision.cut:
                assert request.transport is not None
                request.transport.close()
                raise web.HTTPBadRequest()
            if decision.delay_s:
                await asyncio.sleep(decision.delay_s)  # a latency or timeout fault of --case
            replies += [out for out in (decision.reply, reply) if out is not None]
        headers = {SESSION_HEADER: session}
        if not replies:
            return web.Response(status=202, headers=headers)
        body = encode(replies if batch else replies[0])
        return web.Response(body=body, content_type="application/json", headers=headers)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", handle)
    await _serve(app, host, port, "tracekit mcp replay", "/mcp", None)


async def _serve(app: web.Application, host: str, port: int, name: str, endpoint: str, cleanup: Any) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1]
    print(f"{name}: listening on http://{host}:{bound}", file=sys.stderr, flush=True)
    print(f"{name}: point the MCP client at http://{host}:{bound}{endpoint}; Ctrl-C to stop", file=sys.stderr,
          flush=True)  # fmt: skip
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        if cleanup is not None:
            await cleanup()
        await runner.cleanup()
