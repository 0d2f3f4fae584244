"""Helpers of the MCP tests: the official ``mcp`` SDK's stdio client pointed at ``tracekit mcp ...``."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
SERVER = HERE / "weather_server.py"
T = TypeVar("T")


def server_command() -> list[str]:
    """The test server's own command (stdio)."""
    return [sys.executable, str(SERVER)]


def tracekit(*args: str) -> list[str]:
    """A ``tracekit`` command run by this interpreter."""
    return [sys.executable, "-m", "tracekit", *args]


def with_session(
    command: list[str], work: Callable[[ClientSession], Awaitable[T]], env: dict[str, str] | None = None
) -> T:
    """Run ``work`` on an initialized SDK client session whose server is ``command`` (stdio)."""

    async def main() -> T:
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)

    return anyio.run(main)


async def weather_session(session: ClientSession) -> list[dict[str, Any]]:
    """The test session: list the tools, call them (one failing call, one repeated call); what came back."""
    tools = await session.list_tools()
    seen: list[dict[str, Any]] = [{"tools": sorted(tool.name for tool in tools.tools)}]
    for name, arguments in [("maps_weather", {"city": "北京"}), ("add", {"a": 2, "b": 3}),
                            ("maps_weather", {"city": "Atlantis"}), ("maps_weather", {"city": "北京"})]:  # fmt: skip
        result = await session.call_tool(name, arguments)
        seen.append(result.model_dump(mode="json", exclude_none=True))
    return seen


class Running:
    """A process started for a test, its first stderr/stdout line read to learn where it listens."""

    def __init__(self, command: list[str], *, banner_on: str = "stderr", env: dict[str, str] | None = None) -> None:
        import os
        import subprocess

        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env={**os.environ, **(env or {})})  # fmt: skip
        stream = self.process.stderr if banner_on == "stderr" else self.process.stdout
        assert stream is not None
        self.banner = stream.readline()  # waits for the line the process prints once it listens
        if not self.banner:
            self.process.wait()
            raise AssertionError(f"{command} exited with {self.process.returncode} before listening")

    def url(self, path: str = "") -> str:
        return self.banner.strip().rsplit(" ", 1)[-1] + path

    @property
    def port(self) -> int:
        return int(self.banner.split()[-1].rsplit(":", 1)[-1])

    def stop(self) -> None:
        self.process.terminate()
        self.process.communicate()

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def with_http_session(
    url: str, work: Callable[[ClientSession], Awaitable[T]], headers: dict[str, str] | None = None
) -> T:
    """Run ``work`` on an SDK client session over streamable HTTP (``headers`` on every request)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> T:
        async with httpx2.AsyncClient(headers=headers or {}, timeout=60) as http, streamable_http_client(
            url, http_client=http
        ) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)

    return anyio.run(main)
