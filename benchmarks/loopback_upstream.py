"""A scripted upstream for the proxy benchmarks: one aiohttp handler for ``POST /v1/messages`` on a free
loopback port (what ``proxy_gzip_bomb.py`` and ``proxy_large_stream.py`` send their attacks from)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def start_messages_upstream(answer: Handler) -> tuple[web.AppRunner, str]:
    """Serve ``answer`` on ``POST /v1/messages`` at ``127.0.0.1`` on a free port: the runner and the URL."""
    app = web.Application()
    app.router.add_post("/v1/messages", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"
