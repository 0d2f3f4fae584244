"""Giving memory back once sessions expired, so the proxy's RSS returns to where it was.

CPython's small-object allocator (pymalloc) takes memory from the system in arenas of 1 MiB and returns an
arena only when every block in it is free (``Objects/obmalloc.c``). Thousands of sessions fill dozens of
arenas; once they expire, a handful of long-lived objects allocated among them keeps each of those arenas
(pinned, in the benchmark's measurement: 1 to 10 blocks per arena). What such objects were, and how they
are avoided:

- timers cancelled during the sessions (a request's header and read timeouts: the handle, its time and its
  ``contextvars`` context), which asyncio keeps in its heap until their time comes, up to ten minutes later,
  unless more than half of the heap is cancelled (``BaseEventLoop._run_once``): ``drop_cancelled_timers``
  does at expiry what ``_run_once`` does then;
- attribute names the interpreter's type attribute cache keeps: a lookup by a name made at run time (CPython
  3.11's ``datetime.isoformat`` looks ``utcoffset`` up by a new string each call, ``Modules/_datetimemodule.c``)
  leaves that string in the cache slot of its address until another lookup lands there. The recorder writes
  ``created`` without it, and ``release_memory`` empties the cache (``sys._clear_type_cache``, documented for
  dropping such references);
- the indexes rebuilt at expiry to give their room back: a new container is allocated in the freshest free
  block, which is among the sessions' arenas. ``compacted`` empties an index in place when nothing is left
  in it (no allocation) and rebuilds it only when sessions remain;
- the upstream pool's kept-alive connections (the last answers' parser, headers and reader): closed when an
  expiry leaves nothing to answer (``Proxy.expire_idle``).

``release_memory`` runs once the expired sessions are freed (``ExchangeTracker.expire``): what is freed after
it waits in CPython's freelists and glibc's heap holes until the next expiry.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import gc
import heapq
import sys
from typing import Any, TypeVar, cast

_C = TypeVar("_C", bound="dict[Any, Any] | set[Any]")


def compacted(container: _C) -> _C:
    """``container`` with the room of its removed entries given back: emptied in place when nothing is left
    (nothing allocated), else a copy (same type; a dict keeps its largest size otherwise)."""
    if not container:
        container.clear()
        return container
    return cast(_C, container.copy())


def release_memory() -> None:
    """After sessions were forgotten: drop the running loop's cancelled timers, collect the sessions' cycles,
    empty the type attribute cache and give freed memory back to the system."""
    with contextlib.suppress(RuntimeError):  # (no loop running here: no timers either)
        drop_cancelled_timers(asyncio.get_running_loop())
    gc.collect()
    sys._clear_type_cache()
    _trim_heap()


def drop_cancelled_timers(loop: asyncio.AbstractEventLoop) -> None:
    """Remove the cancelled timers from ``loop``'s heap, as ``BaseEventLoop._run_once`` does once they are
    more than half of it (CPython ``Lib/asyncio/base_events.py``). A loop of another kind is left alone."""
    scheduled = getattr(loop, "_scheduled", None)
    if not isinstance(scheduled, list) or not hasattr(loop, "_timer_cancelled_count"):
        return
    kept = []
    for handle in scheduled:
        if handle.cancelled():
            handle._scheduled = False  # (what _run_once sets: a later cancel() does not count it again)
        else:
            kept.append(handle)
    heapq.heapify(kept)
    scheduled[:] = kept
    loop._timer_cancelled_count = 0


def _trim_heap() -> None:
    """Give freed memory back to the system (glibc keeps it for reuse otherwise, and the process's RSS would
    not come down after thousands of sessions expired; ``malloc_trim(3)``). Elsewhere: nothing to do."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


@functools.cache
def _glibc() -> Any:
    """The C library when it is glibc (it has ``malloc_trim``), else None."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):
        return None
    return libc
