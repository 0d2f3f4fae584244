"""The proxy's HTTP side: routes, reading requests, and the life of one exchange.

``Proxy`` serves each registered provider's route (``POST /v1/messages``, ``POST /v1/chat/completions``,
...) and ``GET /_tracekit/health``. In record mode answers come from the upstream API; in replay mode from a
``ReplayIndex`` (and, with ``on_miss="record"``, from upstream when no recording matches). Intercepts and
faults apply the same way in both. Every other route is forwarded and recorded (record) or answered from
the recordings (replay) by ``other_routes``, except the proxy's own ``/_tracekit/`` paths (404); bodies over
``max_body_bytes`` get a 413 (``refusals``). A
body that is not a JSON object is forwarded as it came and recorded with ``request_raw`` and
``request_parse_error``.

One exchange: the request is read and made safe (``request``), its secrets registered (files written
before a secret was learnt are scrubbed again first), the tracker decides its ``Turn``, the answer is
relayed up to its end (``relay``), the exchange is completed in one ``finally`` (outcome settled once,
session advanced, recording scheduled), and the end of the answer is sent. A client that goes away cancels
the exchange, and with it the upstream request; it is recorded as such.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

import orjson
from aiohttp import web

from tracekit.constants import HEALTH_PATH
from tracekit.intercepts import InterceptConfig
from tracekit.providers import routes
from tracekit.providers.base import Provider
from tracekit.providers.openai_responses import NAME as RESPONSES_NAME
from tracekit.proxy.answers import Answer, UpstreamClient, fault_answer
from tracekit.proxy.config import ProxyConfig, check_config
from tracekit.proxy.connections import AnswerNotifier
from tracekit.proxy.exchange import Exchange
from tracekit.proxy.headers import register_secrets
from tracekit.proxy.memory_release import release_memory
from tracekit.proxy.observers import (
    is_loopback_peer,
    refusal_answer,
    watch_request,
)
from tracekit.proxy.other_routes import OtherRoutes
from tracekit.proxy.other_sockets import relay_socket
from tracekit.proxy.recorder import Recorder
from tracekit.proxy.refusals import no_route, too_large
from tracekit.proxy.relay import Ending, relay
from tracekit.proxy.replayer import ReplayIndex, miss_answer, recorded_answer
from tracekit.proxy.request import clean_headers, read_request
from tracekit.proxy.request_secrets import LearntSecrets, SecretFields, register_query_secrets
from tracekit.proxy.tracking import ExchangeTracker
from tracekit.proxy.websocket import ResponsesSocket, is_websocket_upgrade

log = logging.getLogger(__name__)

#: Live sessions as JSON (loopback clients only): requests so far and what the observer reports.
SESSIONS_PATH = "/_tracekit/sessions"
#: The proxy's own namespace: never forwarded (a 404 for anything but the health route).
OWN_PATHS = "/_tracekit/"




class Proxy(AnswerNotifier):
    """The record/replay proxy as an aiohttp application (see the module docstring)."""

    def __init__(self, config: ProxyConfig, index: ReplayIndex | None = None) -> None:
        self.config = config
        replaying = config.mode == "replay"
        check_config(config)  # before anything (an output folder) is created
        self.routes: dict[str, Provider] = routes()
        """Each provider's model endpoint (installed wire formats included) -> the provider."""
        self._by_resource: dict[object, Provider] = {}
        if replaying and index is None:
            if config.replay_dir is None:
                raise ValueError("replay needs a folder of recordings")
            index = ReplayIndex.load(config.replay_dir, rules=config.match_rules)
        self.index = index
        out_dir = config.out_dir
        if replaying and out_dir is None and config.on_miss == "record":
            out_dir = config.replay_dir
        intercepts = config.intercepts if config.intercepts is not None else InterceptConfig()
        recorder = None
        if out_dir is not None:
            recorder = Recorder(
                out_dir,
                config.redactor,
                source="replay" if replaying else "proxy",
                fsync=config.fsync,
                case_id=intercepts.case_id,
                deferred=replaying and config.out_dir is None,
            )
        self.tracker = ExchangeTracker(recorder, intercepts, config.redactor, config.observer)
        self.secrets = LearntSecrets(config.redactor)
        self._secret_fields = SecretFields(config.secret_fields)
        self.upstream = None
        if (not replaying or config.on_miss == "record") and config.upstream:
            self.upstream = UpstreamClient(config.upstream, self.secrets, connect_timeout=config.connect_timeout,
                                           read_timeout=config.read_timeout,
                                           max_response_bytes=config.max_response_bytes)  # fmt: skip
        self.other_routes = OtherRoutes(self.upstream, index, self.tracker.registry, recorder, config.redactor,
                                        config.timing)  # fmt: skip
        self.other_routes.max_kept = config.max_kept_stream_bytes
        self.matches: Counter[str] = Counter()
        """Model requests answered from recordings, by the rung of the replay ladder that matched."""
        self.loose_matches: list[tuple[str, str]] = []
        """(rung, recording) of every model request a rung other than ``exact`` answered, in order."""
        self.misses: list[str] = self.other_routes.misses
        """Every replay miss's message (model routes and other routes), in order."""
        self._closed = False
        self._stopping = False
        self._in_flight: set[asyncio.Task[object]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._sweeping = False
        self.slow_bodies = 0
        """Requests whose body did not arrive within ``header_timeout`` (answered 408, connection closed)."""

    def app(self) -> web.Application:
        """The aiohttp application (serve it with ``handler_cancellation=True``, as ``runner.start`` does, so
        that a client going away cancels its exchange)."""
        # Bodies sent chunked (no Content-Length) are stopped by aiohttp at the same limit (``request.read``).
        app = web.Application(client_max_size=self.config.max_body_bytes, handler_args={"tcp_keepalive": True},
                              middlewares=[self.note_answered])  # fmt: skip
        app.router.add_get(HEALTH_PATH, self._health)
        app.router.add_get(SESSIONS_PATH, self._sessions)
        for route, provider in self.routes.items():
            # A route may be a pattern (``/model/{model}/converse``): the provider is found by its resource.
            self._by_resource[app.router.add_post(route, self._handle).resource] = provider
        app.router.add_route("*", "/{tail:.*}", self._other_route)
        app.on_startup.append(self._startup)
        app.on_cleanup.append(self._cleanup)
        return app

    async def _startup(self, app: web.Application) -> None:
        if self.upstream is not None:
            await self.upstream.start()
        self._sweeper = asyncio.create_task(self._sweep())

    async def _sweep(self) -> None:
        """Close idle sessions, checking a few times per ``session_idle_timeout`` (at least every 30 s)."""
        idle = self.config.session_idle_timeout
        while True:
            await asyncio.sleep(min(max(idle / 4, 0.05), 30.0))
            self._sweeping = True
            try:
                await self._expire(None)
            finally:
                self._sweeping = False

    async def expire_idle(self, idle: float | None = None) -> int:
        """Close the sessions idle for ``idle`` seconds (default ``session_idle_timeout``) now; how many.

        The periodic sweep, if it is waiting, starts its wait again after this, as it does after each expiry of
        its own: its timer, made while the sessions were served, would otherwise keep the memory around it from
        being given back (``memory_release``)."""
        waiting = self._sweeper if self._sweeper is not None and not self._sweeping else None
        if waiting is not None:
            waiting.cancel()
            await asyncio.wait({waiting})  # its timer is cancelled now, and dropped by the release
        try:
            return await self._expire(idle)
        finally:
            if waiting is not None and not self._closed:
                self._sweeper = asyncio.create_task(self._sweep())

    async def _expire(self, idle: float | None) -> int:
        await self.tracker.drain()  # (recordings scheduled first: then nothing awaits until they are closed)
        expired = self.tracker.expire(self.config.session_idle_timeout if idle is None else idle)
        if expired and not self.tracker.sessions and not self._in_flight and self.upstream is not None:
            # Nothing left to answer: the kept-alive upstream connections hold the last answers' state (parser,
            # headers, reader), allocated among the expired sessions' memory, whose arenas it would keep
            # (``memory_release``). aiohttp closes them after 60 s idle anyway, before any default expiry.
            await self.upstream.close()
            release_memory()
        return expired

    async def _cleanup(self, app: web.Application) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Finish recording and close the upstream pool and the trace files (once)."""
        if self._closed:
            return
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        await self.tracker.drain()
        self.tracker.close()
        if self.upstream is not None:
            await self.upstream.close()

    async def written(self) -> None:
        """Wait until every exchange answered so far is recorded and on disk."""
        await self.tracker.drain()
        if self.tracker.recorder is not None:
            await self.tracker.recorder.written()

    async def stop_exchanges(self, grace: float) -> None:
        """Give the exchanges in flight ``grace`` seconds, then cancel the rest; each is recorded either way
        (a cancelled one as partial, ``error.type`` 'proxy_stopped')."""
        tasks = set(self._in_flight)
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=grace)
        self._stopping = True
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=1.0)

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _sessions(self, request: web.Request) -> web.Response:
        if not is_loopback_peer(request.remote):
            return web.json_response({"error": "the sessions list is served to loopback clients only"}, status=403)
        status = getattr(self.config.observer, "status", None)
        observed: dict[str, dict[str, object]] = status() if callable(status) else {}
        sessions = [{"session": s.id, "name": s.named, "provider": s.provider, "requests": s.requests,
                     **observed.get(s.id, {})} for s in self.tracker.sessions]  # fmt: skip
        # Guard events quote tool arguments: what is shown goes through the redactor like what is written.
        body = self.config.redactor.redact_bytes(orjson.dumps({"sessions": sessions}))
        return web.Response(body=body, content_type="application/json")

    async def _admit(
        self, request: web.Request, provider: Provider | None
    ) -> tuple[bytes, dict[str, str]] | web.Response:
        """The body and the clean headers of a request now in flight (its secrets learnt), or the answer that
        refuses it (``_read_body``)."""
        raw = await self._read_body(request, provider)
        if isinstance(raw, web.Response):
            return raw
        self._track()
        headers = clean_headers(request.headers.items())
        self.learn_secrets(request, headers)
        return raw, headers

    async def _read_body(self, request: web.Request, provider: Provider | None) -> bytes | web.Response:
        """The request body, or the 413 to answer when it is over ``max_body_bytes`` (then nothing is read)."""
        limit = self.config.max_body_bytes
        length = request.content_length
        if length is not None and length > limit:
            log.warning("tracekit: refused a body of %d bytes to %s (limit %d)", length, request.path, limit)
            return too_large(request, provider, length, limit)
        try:
            if request.content.is_eof():  # the whole body is here already (nearly always): no timer, no task
                return await request.read()
            return await asyncio.wait_for(request.read(), self.config.header_timeout)
        except asyncio.TimeoutError:
            self.slow_bodies += 1
            if self.slow_bodies == 1:
                log.warning("tracekit: closed a connection whose request body did not arrive within %g s "
                            "(header_timeout); later ones are counted, not logged", self.config.header_timeout)
            response = web.json_response({"error": {"type": "request_timeout", "message": "tracekit proxy: the "
                                          "request body did not arrive in time"}}, status=408)  # fmt: skip
            response.force_close()
            return response
        except web.HTTPRequestEntityTooLarge:
            log.warning("tracekit: refused a chunked body of more than %d bytes to %s", limit, request.path)
            return too_large(request, provider, None, limit)

    def learn_secrets(self, request: web.Request, headers: dict[str, str]) -> None:
        """Register the secrets of the headers and the query string, before anything of the request is written
        (or logged, or made the session's name)."""
        register_secrets(headers, self.secrets)
        # Every value of a repeated header (``headers`` keeps the last one only).
        register_secrets(request.headers.items(), self.secrets)
        if request.query_string:
            register_query_secrets(request.query.items(), self.secrets)

    async def scrub_if_learnt(self) -> None:
        """When a secret was just learnt, scrub the files written before it, before answering."""
        new = self.secrets.take_new()
        if new and self.tracker.recorder is not None:
            await self.tracker.recorder.rescrub(new)

    def learn_fields(self, body: object) -> None:
        """Register the values of the configured secret fields of a request body."""
        if self._secret_fields and isinstance(body, dict):
            self._secret_fields.register(body, self.secrets)

    @property
    def stopping(self) -> bool:
        """Whether the proxy is cancelling the exchanges still in flight."""
        return self._stopping

    def _track(self) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._in_flight.add(task)
            task.add_done_callback(self._in_flight.discard)

    async def _other_route(self, request: web.Request) -> web.StreamResponse:
        if request.path.startswith(OWN_PATHS):
            return no_route(request)
        if is_websocket_upgrade(request):
            self._track()
            provider = self.routes.get(request.path)
            if provider is not None and provider.NAME == RESPONSES_NAME:
                return await ResponsesSocket(self, request, provider).serve()
            return await relay_socket(self, request)
        admitted = await self._admit(request, None)
        if isinstance(admitted, web.Response):
            return admitted
        raw, headers = admitted
        await self.scrub_if_learnt()
        return await self.other_routes.handle(request, raw, headers)

    # -- one exchange ----------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw_path = request.raw_path.split("?", 1)[0]
        provider = self._by_resource[request.match_info.route.resource]
        provider = provider.for_route(raw_path) or provider  # (encoded: a model id may hold a ``%2F``)
        admitted = await self._admit(request, provider)
        if isinstance(admitted, web.Response):
            return admitted
        raw, headers = admitted
        # Forwarded as the client sent it (percent-encoding kept): a SigV4 signature covers the encoded path.
        parsed = read_request(request.path, request.query_string, headers, raw, provider, upstream_path=raw_path,
                              resolve=self.tracker.output_items.resolve)  # fmt: skip
        self.learn_fields(parsed.body)
        await self.scrub_if_learnt()
        exchange = Exchange(parsed, self.tracker.begin(parsed))
        observer = self.config.observer
        if observer is not None:
            watch_request(observer, exchange)
        ending: Ending | None = None
        try:
            if exchange.turn.faults.latency_ms > 0:
                await asyncio.sleep(exchange.turn.faults.latency_ms / 1000)
            ending = await relay(request, exchange, await self._answer(exchange), self.config.max_kept_stream_bytes)
        except asyncio.CancelledError:  # the proxy is stopping, or the client went away
            if self._stopping:
                exchange.received.fail("cancelled", "the proxy stopped before the exchange ended")
            else:
                exchange.received.client_gone = True
            raise
        finally:
            self.tracker.complete(exchange)  # (shows the observer the answer, then records the exchange)
        assert ending is not None
        await self.tracker.recorded(exchange)  # in the file before the client sees the answer's end
        return await ending.finish(request)

    async def _answer(self, exchange: Exchange) -> Answer:
        answer = self.local_answer(exchange, stream=exchange.request.stream)
        if answer is not None:
            return answer
        assert self.upstream is not None
        return await self.upstream.open(exchange)

    def local_answer(self, exchange: Exchange, *, stream: bool) -> Answer | None:
        """The answer the proxy gives itself (a refusal, a fault, a recording, a replay miss), or None when
        the upstream is to be asked; ``stream``: shape a recording as SSE."""
        received = exchange.received
        if exchange.turn.refusal is not None:
            received.source = "guard"
            return refusal_answer(exchange.provider, exchange.turn.refusal)
        fault = exchange.turn.faults.http_error
        if fault is not None:
            received.source = "fault"
            return fault_answer(exchange.provider, fault)
        if self.index is not None:
            sent = exchange.turn.sent
            matched = self.index.match(sent.key, exchange.provider, sent.body, exchange.turn.session.id)
            if matched is not None:
                recorded, rung = matched
                received.source = "recording"
                self.matches[rung] += 1
                if rung != "exact":
                    log.info("tracekit replay: %s answered by the %s rung", recorded.where, rung)
                    self.loose_matches.append((rung, recorded.where))
                answer = recorded_answer(recorded, stream, self.config.timing)
                answer.headers["x-tracekit-replay-match"] = rung
                return answer
            if self.upstream is None:
                sent = exchange.turn.sent
                answer, message = miss_answer(self.index, exchange.provider, exchange.request.route, sent.body,
                                              sent.key)  # fmt: skip
                self.misses.append(message)
                log.warning("%s", message)
                received.source = "miss"
                return answer
        return None
