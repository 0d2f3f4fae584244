"""The proxy's HTTP side: routes, reading requests, and passing answers on chunk by chunk.

``Proxy`` serves ``POST /v1/messages`` (Anthropic), ``POST /v1/chat/completions`` (OpenAI) and
``GET /_tracekit/health``. In record mode answers come from the upstream API; in replay mode from a
``ReplayIndex`` (and, with ``on_miss="record"``, from upstream when no recording matches). Intercepts
and faults apply the same way in both. Unknown routes (404) and bodies over ``max_body_bytes`` (413) are
answered by the proxy itself (``refusals``); a body that is not a JSON object is forwarded as it came and
recorded with ``request_raw`` and ``request_parse_error``.

Streams are passed on as they arrive: each chunk is written to the client first and parsed for the
trace after. Failures reach the client the way they happened: an error status with its body, a
connection closed before the response (the client's connection is closed too), a stream cut mid-way
(cut again), an in-stream error event (passed on).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from tracekit.intercepts import InterceptConfig
from tracekit.providers import PROVIDERS
from tracekit.providers.base import Provider
from tracekit.providers.sse import encode_event, encode_json_event
from tracekit.proxy.answers import Answer, UpstreamClient, fault_answer, json_answer
from tracekit.proxy.exchange import Exchange, StreamTee
from tracekit.proxy.headers import kept_response_headers, register_secrets
from tracekit.proxy.recorder import Recorder
from tracekit.proxy.refusals import DEFAULT_MAX_BODY_BYTES, error_response, no_route, provider_for_request, too_large
from tracekit.proxy.replayer import ReplayIndex, miss_answer, recorded_answer
from tracekit.proxy.request_secrets import SecretFields, register_query_secrets
from tracekit.proxy.sse_events import EventSplitter
from tracekit.proxy.tracking import ExchangeTracker
from tracekit.redact import Redactor, default_redactor

log = logging.getLogger(__name__)

HEALTH_PATH = "/_tracekit/health"
ROUTES: dict[str, Provider] = {provider.ROUTE: provider for provider in PROVIDERS.values()}
#: Bytes that occur in the chunk holding a stream's final event: seeing them, the proxy parses the chunk
#: before sending it, so the session is advanced before the client can send its next request.
_FINAL_EVENT_MARKERS = {"anthropic": b"message_stop", "openai": b"[DONE]"}
_UPSTREAM_READ_ERRORS = (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, asyncio.TimeoutError)


@dataclass
class ProxyConfig:
    """How a proxy answers and what it records."""

    mode: str = "record"
    """'record' (answers from upstream) or 'replay' (answers from recordings)."""
    upstream: str | None = None
    out_dir: Path | None = None
    """Where traces are written (record: required; replay: optional, misses recorded with on_miss)."""
    replay_dir: Path | None = None
    intercepts: InterceptConfig = field(default_factory=InterceptConfig)
    redactor: Redactor = field(default_factory=default_redactor)
    fsync: bool = False
    timing: str = "instant"
    on_miss: str = "error"
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """Larger request bodies get a 413 in the provider's error shape and are neither forwarded nor recorded."""
    secret_fields: tuple[str, ...] = ()
    """Dotted paths into request bodies (``metadata.user_id``) whose values are secrets: registered with the
    redactor as each request arrives, forwarded unchanged."""


class Proxy:
    """The record/replay proxy as an aiohttp application (see the module docstring)."""

    def __init__(self, config: ProxyConfig, index: ReplayIndex | None = None) -> None:
        self.config = config
        replaying = config.mode == "replay"
        # Configuration is checked before anything (an output folder) is created.
        needs_upstream = not replaying or config.on_miss == "record"
        if needs_upstream and not config.upstream:
            raise ValueError("an upstream URL is needed" + (" to record misses" if replaying else ""))
        if config.max_body_bytes < 1:
            raise ValueError(f"the body size limit must be at least 1 byte, not {config.max_body_bytes}")
        if replaying and index is None:
            if config.replay_dir is None:
                raise ValueError("replay needs a folder of recordings")
            index = ReplayIndex.load(config.replay_dir)
        self.index = index
        out_dir = config.out_dir
        if replaying and out_dir is None and config.on_miss == "record":
            out_dir = config.replay_dir
        recorder = None
        if out_dir is not None:
            recorder = Recorder(
                out_dir,
                config.redactor,
                source="replay" if replaying else "proxy",
                fsync=config.fsync,
                case_id=config.intercepts.case_id,
                deferred=replaying and config.out_dir is None,
            )
        self.tracker = ExchangeTracker(recorder, config.intercepts)
        self._secret_fields = SecretFields(config.secret_fields)
        self.upstream = UpstreamClient(config.upstream, config.redactor) if needs_upstream and config.upstream else None
        self.misses: list[str] = []
        self._closed = False
        self._in_flight: set[asyncio.Task[object]] = set()

    def app(self) -> web.Application:
        """The aiohttp application."""
        # Bodies sent chunked (no Content-Length) are stopped by aiohttp at the same limit (``request.read``).
        app = web.Application(client_max_size=self.config.max_body_bytes, handler_args={"tcp_keepalive": True})
        app.router.add_get(HEALTH_PATH, self._health)
        for route in ROUTES:
            app.router.add_post(route, self._handle)
        app.router.add_route("*", "/{tail:.*}", self._no_route)
        app.on_startup.append(self._startup)
        app.on_cleanup.append(self._cleanup)
        return app

    async def _startup(self, app: web.Application) -> None:
        if self.upstream is not None:
            await self.upstream.start()

    async def _cleanup(self, app: web.Application) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Finish recording and close the upstream pool and the trace files (once)."""
        if self._closed:
            return
        self._closed = True
        await self.tracker.drain()
        self.tracker.close()
        if self.upstream is not None:
            await self.upstream.close()

    async def stop_exchanges(self, grace: float) -> None:
        """Give the exchanges in flight ``grace`` seconds, then cancel the rest; each is recorded either way
        (a cancelled one as partial, ``error.type`` 'proxy_stopped')."""
        tasks = set(self._in_flight)
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=grace)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=1.0)

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _no_route(self, request: web.Request) -> web.StreamResponse:
        if self.config.mode == "record" and self.upstream is not None and request.path.startswith("/v1/"):
            return await self._pass_through(request)
        return no_route(request)

    async def _read_body(self, request: web.Request, provider: Provider | None) -> bytes | web.Response:
        """The request body, or the 413 to answer when it is over ``max_body_bytes`` (then nothing is read)."""
        limit = self.config.max_body_bytes
        length = request.content_length
        if length is not None and length > limit:
            log.warning("tracekit: refused a body of %d bytes to %s (limit %d)", length, request.path, limit)
            return too_large(request, provider, length, limit)
        try:
            return await request.read()
        except web.HTTPRequestEntityTooLarge:
            log.warning("tracekit: refused a chunked body of more than %d bytes to %s", limit, request.path)
            return too_large(request, provider, None, limit)

    async def _pass_through(self, request: web.Request) -> web.StreamResponse:
        """Other API routes (token counting, model lists, ...) are forwarded as they are, not recorded."""
        assert self.upstream is not None
        raw = await self._read_body(request, None)
        if isinstance(raw, web.Response):
            return raw
        headers = {name.lower(): value for name, value in request.headers.items()}
        if request.query_string:
            register_query_secrets(request.query.items(), self.config.redactor)
        answer = await self.upstream.request(request.method, request.path, request.query_string, raw, headers)
        if answer.failure is not None:
            if answer.failure == "reset":
                return _drop_connection(request)
            provider = provider_for_request(request.path, headers)
            return error_response(provider, answer.status, f"tracekit proxy: {answer.failure_detail}")
        response = web.StreamResponse(status=answer.status, headers=answer.headers)
        try:
            await response.prepare(request)
            async for chunk in answer.chunks():
                await response.write(chunk)
            await response.write_eof()
        except _UPSTREAM_READ_ERRORS:
            return _drop_connection(request, response)
        except ConnectionError:
            pass
        finally:
            answer.close()
        return response

    # -- one exchange ----------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        provider = ROUTES[request.path]
        raw = await self._read_body(request, provider)
        if isinstance(raw, web.Response):
            return raw
        body, parse_error = _parse(raw)
        headers = {name.lower(): value for name, value in request.headers.items()}
        exchange = Exchange(provider, request.path, request.query_string, raw, body, headers)
        exchange.parse_error = parse_error
        task = asyncio.current_task()
        if task is not None:
            self._in_flight.add(task)
            task.add_done_callback(self._in_flight.discard)
        # Every secret the request carries is known before anything of it is written (or logged).
        redactor = self.config.redactor
        register_secrets(headers, redactor)
        if exchange.query:
            register_query_secrets(request.query.items(), redactor)
        if self._secret_fields and isinstance(body, dict):
            self._secret_fields.register(body, redactor)
        self.tracker.begin(exchange)
        try:
            if exchange.faults.latency_ms > 0:
                await asyncio.sleep(exchange.faults.latency_ms / 1000)
            answer = await self._answer(exchange)
            return await self._deliver(request, exchange, answer)
        except asyncio.CancelledError:  # the proxy is stopping and this exchange ran out of time
            exchange.failure = exchange.failure or "cancelled"
            raise
        finally:
            if exchange.t_end is None:
                exchange.t_end = time.perf_counter()
            self.tracker.complete(exchange)

    async def _answer(self, exchange: Exchange) -> Answer:
        if exchange.faults.http_error is not None:
            exchange.fault_answer = True
            return fault_answer(exchange, exchange.faults.http_error)
        if self.index is not None:
            recorded = self.index.lookup(exchange.key)
            if recorded is not None:
                exchange.replayed = True
                return recorded_answer(recorded, exchange.stream, self.config.timing)
            exchange.miss = True
            if self.upstream is None:
                answer, message = miss_answer(self.index, exchange.provider, exchange.route, exchange.sent_body,
                                              exchange.key)  # fmt: skip
                self.misses.append(message)
                log.warning("%s", message)
                exchange.miss_answer = True
                return answer
        assert self.upstream is not None
        return await self.upstream.open(exchange)

    async def _deliver(self, request: web.Request, exchange: Exchange, answer: Answer) -> web.StreamResponse:
        exchange.status = answer.status
        exchange.response_headers = kept_response_headers(answer.headers.items())
        if answer.failure == "reset":
            exchange.failure, exchange.failure_detail = "reset", answer.failure_detail
            self.tracker.complete(exchange)
            return _drop_connection(request)
        if answer.failure == "connect":
            exchange.failure, exchange.failure_detail = "connect", answer.failure_detail
            message = f"tracekit proxy: {answer.failure_detail}"
            answer = json_answer(answer.status, exchange.provider.error_body(answer.status, message))
        if not answer.streamed:
            return await self._deliver_body(request, exchange, answer)
        return await self._deliver_stream(request, exchange, answer)

    async def _deliver_body(self, request: web.Request, exchange: Exchange, answer: Answer) -> web.StreamResponse:
        try:
            body = await answer.read()
        except _UPSTREAM_READ_ERRORS as exc:
            exchange.failure, exchange.failure_detail = "cut", f"upstream body cut: {exc!r}"
            answer.close()
            self.tracker.complete(exchange)
            return _drop_connection(request)
        exchange.t_first = exchange.t_end = time.perf_counter()
        exchange.body_bytes = body
        self.tracker.complete(exchange)
        response = web.Response(status=answer.status, headers=answer.headers, body=body)
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError:
            exchange.client_gone = True
        if answer.cut:
            return _drop_connection(request)
        return response

    async def _deliver_stream(self, request: web.Request, exchange: Exchange, answer: Answer) -> web.StreamResponse:
        provider = exchange.provider
        tee = exchange.tee = StreamTee(provider, exchange.t0)
        response = web.StreamResponse(status=answer.status, headers=answer.headers)
        faults = exchange.faults
        stream_fault = faults.cut_after_events is not None or faults.stream_error is not None
        marker = _FINAL_EVENT_MARKERS[provider.NAME]
        chunks = _event_chunks(answer.chunks()) if stream_fault else answer.chunks().__aiter__()
        events_sent = 0
        try:
            await response.prepare(request)
            while True:
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    break
                except _UPSTREAM_READ_ERRORS as exc:
                    if not exchange.completed:
                        exchange.failure, exchange.failure_detail = "cut", f"upstream stream cut: {exc!r}"
                    break
                now = time.perf_counter()
                if exchange.t_first is None:
                    exchange.t_first = now
                if stream_fault:
                    if faults.cut_after_events is not None and events_sent >= faults.cut_after_events:
                        exchange.failure, exchange.failure_detail = "fault_cut", "stream_cut fault"
                        break
                    if faults.stream_error is not None and events_sent >= faults.stream_error.after_events:
                        error_event = _error_event(provider, faults.stream_error.error_type,
                                                   faults.stream_error.message)  # fmt: skip
                        tee.feed(error_event, now)
                        exchange.t_end = now
                        self.tracker.complete(exchange)
                        await response.write(error_event)
                        break
                    events_sent += 1
                if marker in chunk:
                    tee.feed(chunk, now)
                    if tee.assembler.done:
                        exchange.t_end = now
                        self.tracker.complete(exchange)
                    await response.write(chunk)
                else:
                    await response.write(chunk)
                    tee.feed(chunk, now)
        except ConnectionError:
            exchange.client_gone = True
        finally:
            answer.close()
        if exchange.t_end is None:
            exchange.t_end = time.perf_counter()
        tee.close(exchange.t_end)
        self.tracker.complete(exchange)
        if exchange.client_gone:
            return response
        if exchange.failure in ("cut", "fault_cut") or answer.cut:
            return _drop_connection(request, response)
        try:
            await response.write_eof()
        except ConnectionError:
            exchange.client_gone = True
        return response


def _parse(raw: bytes) -> tuple[Any, str | None]:
    """The request body parsed, and why it is not a JSON object when it is not (the model call's parse flag)."""
    if not raw:
        return None, "empty body"
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return None, str(exc)
    if not isinstance(body, dict):
        return body, f"not a JSON object: {type(body).__name__}"
    return body, None


async def _event_chunks(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The stream re-chunked into whole events (only when a fault counts events)."""
    splitter = EventSplitter()
    async for chunk in chunks:
        for event in splitter.feed(chunk):
            yield event
    if splitter.rest():
        yield splitter.rest()


def _error_event(provider: Provider, error_type: str, message: str) -> bytes:
    """The provider's in-stream error event."""
    if provider.NAME == "anthropic":
        return encode_json_event({"type": "error", "error": {"type": error_type, "message": message}}, "error")
    body = {"error": {"message": message, "type": error_type, "param": None, "code": None}}
    return encode_json_event(body) + encode_event("[DONE]")


def _drop_connection(request: web.Request, response: web.StreamResponse | None = None) -> web.StreamResponse:
    """Close the client's connection where it stands, as the upstream's was."""
    if request.transport is not None:
        request.transport.abort()
    return response if response is not None else web.Response()
