"""Client connections within bounds: a time limit on each request's head, a cap on connections, and one log
line per kind of event (issue 27 C: slow clients used to hold descriptors for ever, and at 1,024 of them
the proxy stopped serving and wrote 27 MB of tracebacks).

``GuardedSite`` serves the aiohttp application like ``web.SockSite``, with each connection's protocol
wrapped in a ``_Guarded`` one that:

- closes a connection that has not sent a whole request head (up to its blank line) within
  ``header_timeout`` seconds of connecting, or of starting a later request on a kept-alive connection (a
  request body gets the same time, ``Proxy._read_body``); an idle kept-alive connection is closed after
  ``idle_timeout`` seconds by aiohttp itself (``keepalive_timeout``);
- answers ``503 Service Unavailable`` with ``Retry-After`` and closes, when ``max_connections`` are open;
- reports each kind of event once in the log (``ConnectionEvents``), counting the rest.

Example::

    site = GuardedSite(runner, sock, ConnectionLimits(header_timeout=30, max_connections=512))
    proxy.answered = site.answered      # the application tells it when each request was answered
    await site.start()
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from aiohttp import web

from tracekit.proxy import limits

log = logging.getLogger(__name__)

_HEAD_END = b"\r\n\r\n"


@dataclass(frozen=True)
class ConnectionLimits:
    """Bounds on client connections (``limits`` has the defaults and why)."""

    header_timeout: float = limits.HEADER_TIMEOUT
    idle_timeout: float = limits.IDLE_TIMEOUT
    max_connections: int = limits.MAX_CONNECTIONS


class ConnectionEvents:
    """Counts what happened to connections; the first of each kind is logged, the rest only counted."""

    MESSAGES: ClassVar[dict[str, str]] = {
        "header_timeout": "closed a connection that sent no whole request head within {limit:g} s "
                          "(header_timeout); later ones are counted, not logged",
        "refused": "refused a connection with 503: {limit} connections are open (max_connections); later "
                   "ones are counted, not logged",
    }  # fmt: skip

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def note(self, kind: str, limit: float) -> None:
        """One event of ``kind``."""
        self.counts[kind] += 1
        if self.counts[kind] == 1:
            log.warning("tracekit: %s", self.MESSAGES[kind].format(limit=limit))


class _Guarded(asyncio.Protocol):
    """An aiohttp request handler with the head timer and the connection count (see the module docstring)."""

    def __init__(self, inner: Any, site: GuardedSite) -> None:
        self._inner = inner
        self._site = site
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._tail = b""
        self._counted = False
        self._in_request = False
        """A whole head came and its request is not answered yet: no head timer until it is."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        site = self._site
        if len(site.open) >= site.limits.max_connections:
            site.events.note("refused", site.limits.max_connections)
            transport.write(limits.BUSY_REFUSAL)
            transport.close()
            return
        site.open[transport] = self
        self._counted = True
        self._inner.connection_made(transport)
        self._arm()

    def _arm(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self._site.limits.header_timeout, self._timed_out)

    def _timed_out(self) -> None:
        self._timer = None
        self._site.events.note("header_timeout", self._site.limits.header_timeout)
        if self._transport is not None:
            self._transport.abort()

    def data_received(self, data: bytes) -> None:
        if not self._counted:
            return
        if self._timer is None and not self._in_request:
            self._tail = b""
            self._arm()  # a new request starts on a kept-alive connection
        if self._timer is not None:
            seen = self._tail + data
            if _HEAD_END in seen:
                self._timer.cancel()
                self._timer = None
                self._in_request = True  # (its body, if slow, meets the proxy's body timeout)
            self._tail = seen[-3:]
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._counted else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._counted:
            self._site.open.pop(self._transport, None)
            self._inner.connection_lost(exc)

    def answered(self) -> None:
        """The request on this connection was answered: the next bytes start a new head."""
        self._in_request = False

    def pause_writing(self) -> None:
        if self._counted:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._counted:
            self._inner.resume_writing()


class GuardedSite(web.SockSite):
    """``web.SockSite`` whose connections are bounded (see the module docstring)."""

    def __init__(self, runner: web.AppRunner, sock: Any, limits: ConnectionLimits) -> None:
        super().__init__(runner, sock, backlog=512)
        self.limits = limits
        self.events = ConnectionEvents()
        self.open: dict[Any, _Guarded] = {}
        """The connections served now, by transport."""

    def answered(self, transport: Any) -> None:
        """A request on the connection of ``transport`` was answered (the application says so)."""
        guarded = self.open.get(transport)
        if guarded is not None:
            guarded.answered()

    def protocol(self) -> asyncio.Protocol:
        """A new connection's protocol: the application's request handler within the bounds."""
        server = self._runner.server
        assert server is not None
        return _Guarded(server(), self)

    async def start(self) -> None:
        await web.BaseSite.start(self)
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self.protocol, sock=self._sock, backlog=self._backlog)


class _AcceptErrors(logging.Filter):
    """asyncio logs a traceback each time ``accept()`` fails for want of descriptors (and retries every
    second): the first becomes one line, the rest are counted."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if "accept" not in str(record.msg):
            return True
        self.count += 1
        if self.count > 1:
            return False
        record.msg = ("tracekit: the proxy ran out of file descriptors accepting a connection; it retries "
                      "every second. Lower max_connections or raise ulimit -n; later ones are counted")  # fmt: skip
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        return True


ACCEPT_ERRORS = _AcceptErrors()


def quiet_accept_errors() -> None:
    """Install the filter on asyncio's logger (once)."""
    asyncio_log = logging.getLogger("asyncio")
    if ACCEPT_ERRORS not in asyncio_log.filters:
        asyncio_log.addFilter(ACCEPT_ERRORS)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
"""An aiohttp request handler."""


class AnswerNotifier:
    """What an application that a ``GuardedSite`` serves mixes in: ``answered`` (set to the site's
    ``answered``) is told the transport of each request once it is answered, through the middleware
    ``note_answered`` (``middlewares=[self.note_answered]``)."""

    answered: Callable[[Any], None] | None = None

    @web.middleware
    async def note_answered(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Answer the request, then tell ``answered`` (whatever the answer was)."""
        transport = request.transport
        try:
            return await handler(request)
        finally:
            if self.answered is not None:
                self.answered(transport)
