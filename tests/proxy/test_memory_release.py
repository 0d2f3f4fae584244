"""What expiry leaves behind (issue 31 item 3): nothing per session. Memory is counted as blocks that
tracemalloc still sees allocated by the proxy's session code, not as RSS: one long-lived block among the
sessions' memory keeps a whole allocator arena (``tracekit.proxy.memory_release``)."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
import weakref
from pathlib import Path

import anthropic
import pytest

from tracekit.proxy import tracking
from tracekit.proxy.memory_release import compacted, drop_cancelled_timers
from tracekit.proxy.sessions import Session

from .helpers import recording

#: The modules that hold a session's state while it lives.
_SESSION_CODE = ("recorder.py", "sessions.py", "tracking.py", "trace_files.py", "written_tokens.py", "closed_traces.py")


def _left_by_session_code() -> tuple[int, int]:
    """Blocks still allocated by the session code, and their bytes."""
    gc.collect()
    snapshot = tracemalloc.take_snapshot()
    left = [
        trace.size for trace in snapshot.traces
        if any("tracekit/proxy/" in frame.filename and frame.filename.endswith(_SESSION_CODE)
               for frame in trace.traceback)
    ]  # fmt: skip
    return len(left), sum(left)


def test_expired_sessions_leave_no_block_behind(tmp_path: Path) -> None:
    with recording(lambda request: "好的。", tmp_path / "rec") as (_, proxy):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="tk-memory-key-0001", max_retries=0)

        def sessions(first: int, count: int) -> None:
            for number in range(first, first + count):
                question = {"role": "user", "content": f"会话 {number}：北京明天天气怎么样？"}
                client.messages.create(model="claude-x", max_tokens=16, messages=[question])  # type: ignore[list-item]

        sessions(0, 5)
        assert proxy.expire_idle(0) == 5  # warm-up: what is made once is made now
        tracemalloc.start(30)
        try:
            sessions(100, 10)
            assert proxy.expire_idle(0) == 10
            after_ten = _left_by_session_code()
            sessions(200, 40)
            assert proxy.expire_idle(0) == 40
            after_fifty = _left_by_session_code()
        finally:
            tracemalloc.stop()
    assert after_fifty[0] == after_ten[0], "a block per expired session is still allocated"
    # (the paths of the closed files, kept for the scrub at close, are on disk: no byte per session either)
    assert after_fifty[1] == after_ten[1], "memory per expired session is still allocated"


def test_cancelled_timers_are_dropped_and_live_ones_still_fire() -> None:
    loop = asyncio.new_event_loop()
    try:
        fired = loop.create_future()
        live = loop.call_later(0, fired.set_result, "fired")
        cancelled = [loop.call_later(600, print) for _ in range(3)]
        for handle in cancelled:
            handle.cancel()
        gone = [weakref.ref(handle) for handle in cancelled]
        del cancelled, handle
        drop_cancelled_timers(loop)
        gc.collect()
        assert [ref() for ref in gone] == [None, None, None]
        assert loop.run_until_complete(fired) == "fired" and not live.cancelled()
    finally:
        loop.close()


def test_compacted_empties_in_place_and_copies_what_is_left() -> None:
    empty: dict[str, int] = {"a": 1}
    del empty["a"]
    assert compacted(empty) is empty and empty == {}
    left = {"a": 1, "b": 2}
    del left["a"]
    copy = compacted(left)
    assert copy == {"b": 2} and copy is not left
    names = {"x"}
    names.discard("x")
    assert compacted(names) is names


def test_expired_sessions_are_freed_before_memory_is_released(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``release_memory`` collects, clears and trims: what is freed after it (the sessions themselves, while
    the expiry still held them) would stay in the freelists and the heap's holes until the next expiry."""
    alive_at_release: list[int] = []
    expiring: list[weakref.ref[Session]] = []

    def counting() -> None:
        gc.collect()
        alive_at_release.append(sum(1 for session in expiring if session() is not None))

    monkeypatch.setattr(tracking, "release_memory", counting)
    with recording(lambda request: "好的。", tmp_path / "rec") as (_, proxy):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="tk-memory-key-0002", max_retries=0)
        for number in range(3):
            question = {"role": "user", "content": f"会话 {number}：你好"}
            client.messages.create(model="claude-x", max_tokens=16, messages=[question])  # type: ignore[list-item]
        expiring.extend(weakref.ref(session) for session in proxy.proxy.tracker.sessions)
        assert proxy.expire_idle(0) == 3
    assert len(expiring) == 3 and alive_at_release == [0]


def test_an_explicit_expiry_drops_the_sweep_timer_made_while_sessions_were_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The periodic sweep's timer, armed while the sessions were served, is cancelled before the release (so
    the release drops it with the other cancelled timers) and a new one is armed after it."""
    cancelled_at_release: list[bool] = []
    with recording(lambda request: "好的。", tmp_path / "rec") as (_, proxy):
        served = proxy.proxy
        sweeper = served._sweeper
        assert sweeper is not None and not sweeper.done()
        monkeypatch.setattr(tracking, "release_memory", lambda: cancelled_at_release.append(sweeper.cancelled()))
        client = anthropic.Anthropic(base_url=proxy.url, api_key="tk-memory-key-0003", max_retries=0)
        client.messages.create(model="claude-x", max_tokens=16, messages=[{"role": "user", "content": "你好"}])
        assert proxy.expire_idle(0) == 1
        assert cancelled_at_release == [True]
        assert served._sweeper is not sweeper and served._sweeper is not None and not served._sweeper.done()
