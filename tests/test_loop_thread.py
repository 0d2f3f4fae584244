"""The background event loop shared by the fake upstream and the in-process proxy."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tracekit.loop_thread import LoopThread, ThreadServed


async def _where() -> tuple[str, asyncio.AbstractEventLoop]:
    return threading.current_thread().name, asyncio.get_running_loop()


def test_run_executes_on_the_background_loop_and_returns_the_result() -> None:
    background = LoopThread("tracekit-test-loop")
    try:
        name, loop = background.run(_where(), timeout=5)
        assert name == "tracekit-test-loop"
        assert loop is background.loop
        assert background.thread.daemon
    finally:
        background.stop()


def test_stop_runs_the_closing_coroutine_then_closes_the_loop_and_joins() -> None:
    background = LoopThread("tracekit-test-loop")
    closed_on: list[str] = []

    async def closing() -> None:
        closed_on.append(threading.current_thread().name)

    background.stop(closing())
    assert closed_on == ["tracekit-test-loop"]
    assert not background.thread.is_alive()
    assert background.loop.is_closed()


def test_stop_still_stops_the_loop_when_closing_fails() -> None:
    background = LoopThread("tracekit-test-loop")

    async def failing() -> None:
        raise OSError("cannot close")

    with pytest.raises(OSError, match="cannot close"):
        background.stop(failing())
    assert not background.thread.is_alive()
    assert background.loop.is_closed()


def test_with_starts_and_closes_a_thread_served_object() -> None:
    calls: list[str] = []

    class Server(ThreadServed):
        def start(self) -> Server:
            calls.append("start")
            return self

        def close(self) -> None:
            calls.append("close")

    server = Server()
    with pytest.raises(KeyError), server as entered:
        assert entered is server
        assert calls == ["start"]
        raise KeyError("body fails")
    assert calls == ["start", "close"]
