"""A hostile upstream on loopback: a real aiohttp server whose handler the test gives (gzip bombs, endless
streams), served from a thread like the proxy itself."""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from tracekit.loop_thread import LoopThread

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def gzip_of_zeros(size: int) -> bytes:
    """A gzip member of ``size`` zero bytes (about 1/1000 of ``size``): a decompression bomb."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1024 * 1024)
    parts = [compressor.compress(block) for _ in range(size // len(block))]
    parts.append(compressor.compress(bytes(size % len(block))))
    parts.append(compressor.flush())
    return b"".join(parts)


class HostileUpstream:
    """``with HostileUpstream(handler) as up: up.url`` (every path and method goes to ``handler``)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests = 0
        self.url = ""
        self._thread: LoopThread | None = None
        self._runner: web.AppRunner | None = None

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        return await self.handler(request)

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._serve)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"  # type: ignore[attr-defined]

    def __enter__(self) -> HostileUpstream:
        self._thread = LoopThread("hostile-upstream")
        self.url = self._thread.run(self._start(), timeout=10)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._thread is not None:
            self._thread.stop(self._runner.cleanup() if self._runner is not None else None)
