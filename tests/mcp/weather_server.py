"""A small MCP server with real tools, built with the official ``mcp`` SDK (``MCPServer``, FastMCP in mcp 1.x).

Run as ``python weather_server.py`` (stdio) or ``python weather_server.py http`` (streamable HTTP on a free
loopback port, printed as ``port N``; ``sse``: the older HTTP+SSE transport). When
``WEATHER_MARKER`` names a file, the server creates it as it starts: a test proves a replay ran without the
server by that file's absence.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("weather-test", version="1.2.3", log_level="ERROR")

FORECASTS = {"北京": "晴 25°C", "上海": "小雨 22°C", "Paris": "cloudy 18°C"}


@server.tool()
def maps_weather(city: str, days: int = 1) -> str:
    """The weather forecast of a city for the next ``days`` days."""
    if city not in FORECASTS:
        raise ToolError(f"unknown city: {city}")
    return f"{city}: {FORECASTS[city]} x{days}"


@server.tool()
def add(a: int, b: int) -> int:
    """The sum of two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """The text it was given (a tool that leaks what it is sent, for the redaction tests)."""
    return text


def serve_http(transport: str) -> None:
    """Streamable HTTP (or the older HTTP+SSE transport, ``sse``) on a free loopback port, printed as ``port N``
    on stdout once the socket listens."""
    import socket

    import anyio
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"port {sock.getsockname()[1]}", flush=True)  # connections wait in the backlog until uvicorn serves
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    config = uvicorn.Config(app, log_level="error")
    anyio.run(uvicorn.Server(config).serve, [sock])


def main() -> None:
    marker = os.environ.get("WEATHER_MARKER")
    if marker:
        Path(marker).write_text(str(os.getpid()), encoding="utf-8")
    if sys.argv[1:2] in (["http"], ["sse"]):
        serve_http(sys.argv[1])
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
