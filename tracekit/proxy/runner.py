"""Running a proxy: serving it on a bound socket (``tracekit.proxy.listening``), stopping cleanly.

``serve`` is what ``tracekit record`` / ``tracekit replay`` run: it prints
``tracekit <mode>: listening on http://127.0.0.1:PORT`` (flushed, so a parent process can read the port
chosen for ``--port 0``), and on SIGTERM or SIGINT stops accepting, gives in-flight exchanges a moment,
writes what is left and returns (exit status 0) within a few seconds.

``RunningProxy`` runs one in a background thread with its own event loop, for synchronous SDK clients in
tests and notebooks::

    with RunningProxy(ProxyConfig(upstream=up.url, out_dir=tmp)) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key="x")
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from typing import Protocol

from aiohttp import web

from tracekit.loop_thread import LoopThread, ThreadServed, stop_on_signals
from tracekit.proxy.config import ProxyConfig
from tracekit.proxy.connections import ConnectionLimits, GuardedSite, quiet_accept_errors
from tracekit.proxy.front_door import FrontDoor
from tracekit.proxy.listening import bind, url_of

log = logging.getLogger(__name__)

#: Seconds in-flight exchanges get to finish once a stop was asked for (then they are cut and recorded).
SHUTDOWN_GRACE = 2.0


class Served(Protocol):
    """What ``start`` / ``stop`` / ``serve`` run: a ``Proxy``, or a ``LoadingProxy`` building one."""

    config: ProxyConfig
    answered: Callable[[object], None] | None

    def app(self) -> web.Application:
        """The aiohttp application to serve."""

    async def stop_exchanges(self, grace: float) -> None:
        """Let the exchanges in flight end within ``grace`` seconds, then cut them."""

    async def aclose(self) -> None:
        """Finish recording, close what is open."""


async def start(
    proxy: Served, host: str, port: int, sock: socket.socket | None = None, door: FrontDoor | None = None
) -> tuple[web.AppRunner, str]:
    """Bind (unless given a socket ``bind`` made) and start serving ``proxy`` in the running loop; returns
    the runner and the URL. The connections a ``door`` serving ``sock`` holds are handed to it."""
    sock = sock or bind(host, port)
    # In-flight exchanges are stopped by ``stop`` first; the runner's own timeout only bounds closing idle
    # keep-alive connections.
    # handler_cancellation: a client that goes away cancels its exchange, and with it the upstream request.
    config = proxy.config
    runner = web.AppRunner(proxy.app(), handle_signals=False, access_log=None, shutdown_timeout=0.5,
                           handler_cancellation=True, keepalive_timeout=config.idle_timeout)  # fmt: skip
    await runner.setup()
    quiet_accept_errors()
    bounds = ConnectionLimits(config.header_timeout, config.idle_timeout, config.max_connections)
    site = GuardedSite(runner, sock, bounds)
    proxy.answered = site.answered
    if door is not None:
        door.stop_accepting()
    await site.start()
    if door is not None:
        door.hand_over(site.protocol)
    return runner, url_of(host, sock.getsockname()[1])


async def stop(proxy: Served, runner: web.AppRunner) -> None:
    """Stop accepting, let in-flight exchanges end (cutting those that take too long), write everything."""
    for site in list(runner.sites):
        await site.stop()
    await proxy.stop_exchanges(SHUTDOWN_GRACE)
    try:
        await asyncio.wait_for(runner.cleanup(), timeout=2.0)
    except asyncio.TimeoutError:
        log.warning("tracekit: the server did not stop in time; writing what was recorded")
    await proxy.aclose()


async def serve(
    proxy: Served, host: str, port: int, announce: Callable[[str], None] | None, sock: socket.socket | None = None,
    stopping: asyncio.Event | None = None, door: FrontDoor | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT (or until ``stopping`` is set), then finish writing and return. ``announce``
    gets the URL once serving (None: announced already, by the ``door`` serving ``sock``)."""
    stopping = stopping or asyncio.Event()
    stop_on_signals(stopping)
    runner, url = await start(proxy, host, port, sock, door)
    if announce is not None:
        announce(url)
    try:
        await stopping.wait()
    finally:
        await stop(proxy, runner)


class RunningProxy(ThreadServed):
    """A proxy serving from a background thread (see the module docstring)."""

    def __init__(self, config: ProxyConfig, *, host: str = "127.0.0.1", port: int = 0) -> None:
        # Lazy: the proxy's modules (providers, record models: a few tenths of a second) load when one is made, not
        # when this module is imported for a LoadingProxy that builds its proxy in the background. server does not
        # import runner: no cycle.
        from tracekit.proxy.server import Proxy

        self.proxy = Proxy(config)
        self.host = host
        self.port = port
        self.url = ""
        self._thread: LoopThread | None = None
        self._runner: web.AppRunner | None = None

    def start(self) -> RunningProxy:
        """Start serving; returns once the port is bound."""
        self._thread = LoopThread("tracekit-proxy")
        self._runner, self.url = self._thread.run(start(self.proxy, self.host, self.port), timeout=10)
        return self

    def wait_written(self, timeout: float = 10) -> None:
        """Return once every exchange answered so far is recorded and its file on disk."""
        if self._thread is None:
            raise RuntimeError("the proxy is not running")
        self._thread.run(self.proxy.written(), timeout=timeout)

    def expire_idle(self, idle: float | None = None, timeout: float = 30) -> int:
        """Close the sessions idle for ``idle`` seconds now (default: the configured timeout); how many."""
        if self._thread is None:
            raise RuntimeError("the proxy is not running")
        return self._thread.run(self.proxy.expire_idle(idle), timeout=timeout)

    def close(self) -> None:
        """Stop serving, finish writing the traces, join the thread."""
        thread, runner = self._thread, self._runner
        self._thread = self._runner = None
        if thread is not None:
            thread.stop(stop(self.proxy, runner) if runner is not None else None, timeout=SHUTDOWN_GRACE + 10)

    @property
    def openai_url(self) -> str:
        """``url + "/v1"``: the openai SDK's ``base_url``."""
        return self.url + "/v1"
