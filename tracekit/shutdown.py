"""Stopping a server cleanly: SIGTERM and SIGINT set an event the server waits on."""

from __future__ import annotations

import asyncio
import signal
import sys

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
