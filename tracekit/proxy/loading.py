"""Serving while the proxy is built: ``tracekit replay`` opens its port at once and loads its recordings in
the background.

Loading 20,000 recorded exchanges takes about a second, and importing the proxy (the record models, the
providers, the case library) a few tenths more. ``LoadingProxy`` serves from the moment the port is bound:
``GET /_tracekit/health`` answers ``{"status": "loading"}`` (200) until the proxy is built, then the proxy's
own ``{"status": "ok"}``; every other request that arrives meanwhile waits for the build and is then answered
by the proxy as if it had come later (a recorded answer, not a miss). The build runs ``build`` in a daemon
thread (the index is built there and handed over whole, so the event loop never sees it half made); if it
fails, the requests waiting get a 503 saying why, ``failed`` is called (the command stops and reports the
error) and ``failure`` keeps the exception.

Example (what ``tracekit.proxy.launch.run`` does for replay)::

    loading = LoadingProxy(config, lambda: Proxy(config), ready=print_counts, failed=stopping.set)
    await serve(loading, host, port, announce, sock, stopping)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from aiohttp import web

from tracekit.constants import HEALTH_PATH
from tracekit.proxy.config import ProxyConfig
from tracekit.proxy.connections import AnswerNotifier

if TYPE_CHECKING:
    from tracekit.proxy.server import Proxy

log = logging.getLogger(__name__)



class LoadingProxy(AnswerNotifier):
    """A proxy built in a background thread and served meanwhile (see the module docstring)."""

    def __init__(
        self,
        config: ProxyConfig,
        build: Callable[[], Proxy],
        *,
        ready: Callable[[Proxy], None] | None = None,
        failed: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.proxy: Proxy | None = None
        """The proxy once built (None while loading, or when the build failed)."""
        self.failure: BaseException | None = None
        """What the build raised, if it failed."""
        self.waited = 0
        """Requests that arrived before the proxy was built and waited for it."""
        self.first_wait = threading.Event()
        """Set when a request first waits for the build (lets a test hold the build until one does)."""
        self._build = build
        self._ready = ready
        self._failed = failed
        self._done: asyncio.Event | None = None
        self._proxy_app: web.Application | None = None
        self._builder: asyncio.Task[None] | None = None

    def app(self) -> web.Application:
        """The application served: health at once, everything else through the proxy once it is built."""
        app = web.Application(client_max_size=self.config.max_body_bytes, handler_args={"tcp_keepalive": True},
                              middlewares=[self.note_answered])  # fmt: skip
        app.router.add_route("*", "/{tail:.*}", self._handle)
        app.on_startup.append(self._start_building)
        app.on_cleanup.append(self._cleanup)
        return app

    @property
    def loading(self) -> bool:
        """Whether the build is still under way."""
        return self.proxy is None and self.failure is None

    async def _start_building(self, app: web.Application) -> None:
        self._done = asyncio.Event()
        self._builder = asyncio.create_task(self._become_ready())

    async def _become_ready(self) -> None:
        assert self._done is not None
        built: Future[Proxy] = Future()
        thread = threading.Thread(target=_run_into, args=(self._build, built), name="tracekit-load", daemon=True)
        thread.start()
        try:
            proxy = await asyncio.wrap_future(built)
            proxy_app = proxy.app()
            proxy_app.freeze()
            await proxy_app.startup()
        except Exception as exc:
            self.failure = exc
            self._done.set()
            if self._failed is not None:
                self._failed()
            return
        self.proxy, self._proxy_app = proxy, proxy_app
        self._done.set()
        if self._ready is not None:
            self._ready(proxy)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if self._proxy_app is None:
            if request.path == HEALTH_PATH and request.method in ("GET", "HEAD") and self.loading:
                return web.json_response({"status": "loading"})
            self.waited += 1
            self.first_wait.set()
            assert self._done is not None
            await self._done.wait()
            if self._proxy_app is None:
                message = f"tracekit: the proxy could not start: {self.failure}"
                return web.json_response({"error": {"type": "unavailable", "message": message}}, status=503)
        # Routed by the proxy's own application, as aiohttp routes a request (``Application._handle``), on a
        # clone of the request (the same connection and body) that carries that route: the proxy's handlers read
        # the route that matched (a provider is found by its route's resource).
        match = await self._proxy_app.router.resolve(request)
        match.add_app(self._proxy_app)
        match.freeze()
        routed = request.clone()
        routed._match_info = match
        return await match.handler(routed)

    async def stop_exchanges(self, grace: float) -> None:
        """As ``Proxy.stop_exchanges`` once the proxy is built (requests still waiting are cancelled with the
        server)."""
        if self.proxy is not None:
            await self.proxy.stop_exchanges(grace)

    async def written(self) -> None:
        """As ``Proxy.written`` (nothing to wait for before the proxy is built)."""
        if self.proxy is not None:
            await self.proxy.written()

    async def _cleanup(self, app: web.Application) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the proxy (once); a build still under way is no longer waited for (a stop asked for during the
        load ends the command at once: the build's thread is a daemon)."""
        builder = self._builder
        if builder is not None and not builder.done():
            builder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await builder
        if self.proxy is not None:
            await self.proxy.aclose()


def _run_into(build: Callable[[], Proxy], built: Future[Proxy]) -> None:
    try:
        built.set_result(build())
    except BaseException as exc:  # handed to the event loop, which reports it
        built.set_exception(exc)


__all__ = ["LoadingProxy"]
