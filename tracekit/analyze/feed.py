"""How a stream of file names reaches the workers without being listed into memory first.

A listing of object storage (``tracekit.storage.iter_files``) yields names a page at a time; the analysis
must take them as they come, holding a bounded number at once, whatever runs it:

- ``bounded_imap``: a ``multiprocessing`` pool's ``imap`` over a stream. ``Pool.imap`` alone reads its whole
  input in a thread of its own as fast as it can (the whole listing would be queued); here that thread
  waits at a gate before taking each name, and a name's permit is returned when its result is yielded, so
  at most ``window`` names are in flight.
- ``windows``: a stream cut into lists of at most ``size`` names (the Ray engine runs one Ray Data
  execution per window).

Both keep the input order, so the results are those of the whole list.

Example::

    for window in windows(iter_files("s3://bucket/traces", ".jsonl"), 4096):
        ...  # at most 4,096 names held here
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any, TypeVar

#: Names per task of a ``--jobs`` pool fed a stream (a list's chunks are sized from its length).
STREAM_CHUNK = 16
#: Chunks in flight per worker process when the pool is fed a stream (names held: chunk x jobs x this).
STREAM_WINDOW = 4

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


def windows(items: Iterable[ItemT], size: int) -> Iterator[list[ItemT]]:
    """``items`` in order, as consecutive lists of ``size`` (the last one shorter); nothing for no items."""
    stream = iter(items)
    while window := list(islice(stream, size)):
        yield window


def bounded_imap(
    pool: Any, func: Callable[[ItemT], ResultT], items: Iterable[ItemT], chunksize: int, window: int
) -> Iterator[ResultT]:
    """``pool.imap(func, items, chunksize)``, in order, with at most ``window`` items taken from ``items``
    and not yet yielded back (``window`` is raised to ``chunksize`` so that a chunk can always fill)."""
    gate = threading.Semaphore(max(window, chunksize))
    stopped = threading.Event()

    def gated() -> Iterator[ItemT]:
        for item in items:
            gate.acquire()
            if stopped.is_set():  # the consumer went away: let the pool's feeding thread end
                return
            yield item

    try:
        for result in pool.imap(func, gated(), chunksize):
            gate.release()
            yield result
    finally:
        stopped.set()
        for _ in range(max(window, chunksize) + 1):  # wake the feeding thread if it waits at the gate
            gate.release()
