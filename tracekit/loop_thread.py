"""Running a server's event loop: in a background thread, or in the main thread until a stop signal.

The fake upstream (``tracekit.testing.FakeUpstream``) and the in-process proxy (``tracekit.proxy.RunningProxy``)
both run an aiohttp server from a background thread, an event loop of its own for synchronous clients (SDKs,
tests): ``LoopThread`` is the thread and its loop, ``ThreadServed`` the ``with`` protocol on top of a class's
``start`` / ``close``. A server run as a command (``tracekit record``) stops cleanly on SIGTERM and SIGINT
instead: ``stop_on_signals``.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, TypeVar

__all__ = ["STOP_SIGNALS", "LoopThread", "ThreadServed", "stop_on_signals"]

_T = TypeVar("_T")
_Served = TypeVar("_Served", bound="ThreadServed")


class LoopThread:
    """A new event loop running forever in a daemon thread (started on construction)."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=_run_forever, args=(self.loop,), name=name, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, _T], timeout: float) -> _T:
        """Run ``coro`` on the loop and wait up to ``timeout`` seconds for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=timeout)

    def stop(self, closing: Coroutine[Any, Any, Any] | None = None, timeout: float = 10) -> None:
        """Run ``closing`` (if any, up to ``timeout`` seconds), then stop the loop and join the thread.

        The loop is stopped and the thread joined even when ``closing`` fails or times out.
        """
        try:
            if closing is not None:
                self.run(closing, timeout)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


class ThreadServed(ABC):
    """``with`` support for a server that has ``start()`` (returning itself) and ``close()``."""

    @abstractmethod
    def start(self: _Served) -> _Served:
        """Start serving; returns once the server accepts connections."""

    @abstractmethod
    def close(self) -> None:
        """Stop serving."""

    def __enter__(self: _Served) -> _Served:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _run_forever(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.close()


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def stop_on_signals(stopping: asyncio.Event) -> None:
    """Set ``stopping`` when SIGTERM or SIGINT arrives; call from the running event loop, in the main thread.

    Where the event loop handles signals itself (POSIX), its handlers are used. Windows event loops have
    none (``add_signal_handler`` raises there), so plain signal handlers pass the event on to
    the loop instead.
    """
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        if sys.platform == "win32":
            signal.signal(sig, lambda *_: loop.call_soon_threadsafe(stopping.set))
        else:
            loop.add_signal_handler(sig, stopping.set)
