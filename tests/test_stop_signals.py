"""SIGTERM and SIGINT stop servers cleanly, on POSIX event loops and on the Windows fallback."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from tracekit import loop_thread


@pytest.mark.parametrize("platform", ["linux", "win32"])
@pytest.mark.parametrize("sig", loop_thread.STOP_SIGNALS)
def test_a_stop_signal_sets_the_event(monkeypatch: pytest.MonkeyPatch, platform: str, sig: signal.Signals) -> None:
    # win32 takes the plain-handler path that Windows event loops need; it runs on POSIX too.
    monkeypatch.setattr(loop_thread.sys, "platform", platform)
    saved = {s: signal.getsignal(s) for s in loop_thread.STOP_SIGNALS}

    async def main() -> bool:
        stopping = asyncio.Event()
        loop_thread.stop_on_signals(stopping)
        loop = asyncio.get_running_loop()
        try:
            assert not stopping.is_set()
            os.kill(os.getpid(), sig)
            await asyncio.wait_for(stopping.wait(), timeout=5)
            return stopping.is_set()
        finally:
            for s in loop_thread.STOP_SIGNALS:
                loop.remove_signal_handler(s)

    try:
        assert asyncio.run(main())
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
