"""Trace files of the proxy: one ``SessionTrace`` per session, appended one exchange at a time.

The writing is ``tracekit.trace.TraceWriter``'s (every line through the redactor, the records of one
exchange with one system call, no record able to stop a file). What the proxy adds: a file is created off
the event loop, closed between exchanges and reopened, and can be held (its records wait in memory) while
it is scrubbed again with secrets learnt after it was written (``scrub``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from tracekit.proxy.shared_texts import SharedTexts
from tracekit.redact import Redactor
from tracekit.trace import TraceBuilder, TraceWriter
from tracekit.trace.models import Header

log = logging.getLogger(__name__)


def scrub(path: Path, redactor: Redactor) -> None:
    """Redact a closed trace file again, replacing it atomically only when something changed."""
    data = path.read_bytes()
    cleaned = redactor.redact_bytes(data)
    if cleaned != data:
        temporary = path.with_suffix(path.suffix + ".tmp")
        temporary.write_bytes(cleaned)
        os.replace(temporary, path)


class SessionTrace:
    """The records of one session and the file they go to.

    Creating a file can take a millisecond on some filesystems, so inside an event loop the file is
    created by a helper thread while the records wait in memory; appending to it later is cheap.
    Records leave memory once written. A file can be closed between exchanges (``suspend``) and is
    reopened for the next one, so a long recording keeps a bounded number of files open.
    """

    def __init__(
        self,
        header: Header,
        path: Path | None,
        redactor: Redactor,
        fsync: bool,
        deferred: bool,
        opener: ThreadPoolExecutor | None = None,
        on_open: Callable[[SessionTrace], None] | None = None,
    ) -> None:
        self.builder = TraceBuilder(header)
        self.path = path
        self.deferred = deferred
        self.injected_ids: set[str] = set()
        self.shared = SharedTexts()
        self.exchanges = 0
        """Exchanges recorded in this trace (model exchanges and other routes)."""
        self._held = 0
        self._redactor = redactor
        self._fsync = fsync
        self._opener = opener
        self._on_open = on_open
        self._opening: Future[TraceWriter] | None = None
        self._writer: TraceWriter | None = None
        self._created = False
        self._closed = False

    @property
    def is_open(self) -> bool:
        """Whether the file is open now."""
        return self._writer is not None

    @property
    def on_disk(self) -> bool:
        """Whether the file has been created (it may hold records)."""
        return self._created and self.path is not None and not self._closed

    @property
    def held(self) -> bool:
        """Whether new records wait in memory while the file is scrubbed again (``hold``)."""
        return self._held > 0

    def hold(self) -> None:
        """Keep new records in memory and close the file, until as many ``release`` calls (a scrub rewrites it)."""
        self._held += 1
        self.suspend()

    def release(self) -> None:
        """End one ``hold``; the last one writes what waited."""
        self._held = max(0, self._held - 1)
        if not self._held:
            self.flush()

    def flush(self) -> None:
        """Append the records not written yet (unless the trace waits to be materialized, or is held)."""
        if self.deferred or self.path is None or self._closed or self._held:
            return
        if self._writer is None and not self._open():
            return
        assert self._writer is not None
        records = self.builder.records
        if records:
            self._writer.write_many(records)
            records.clear()

    def suspend(self) -> None:
        """Close the file until the next write (which reopens it for appending)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _open(self) -> bool:
        """Open the file now, or start creating it in the helper thread (then return False)."""
        assert self.path is not None
        if self._opening is not None and not self._created:
            return False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if self._created or loop is None or self._opener is None:
            self._set_writer(TraceWriter(self.path, redactor=self._redactor, fsync=self._fsync))
            return True
        try:
            self._opening = self._opener.submit(TraceWriter, self.path, redactor=self._redactor, fsync=self._fsync)
        except RuntimeError:  # the helper thread has stopped (the proxy is closing): open here
            self._set_writer(TraceWriter(self.path, redactor=self._redactor, fsync=self._fsync))
            return True
        self._opening.add_done_callback(lambda _: loop.call_soon_threadsafe(self._opened))
        return False

    async def written(self) -> None:
        """Wait until every record recorded so far is on disk (its file created, nothing held back)."""
        opening = self._opening
        if opening is not None and not self._created:
            await asyncio.wrap_future(opening)
            await asyncio.sleep(0)  # the callback that takes the new file runs on this loop
        self.flush()

    def _opened(self) -> None:
        if self._closed or self._opening is None or self._created:
            return
        try:
            writer = self._opening.result()
        except OSError as exc:
            log.error("tracekit: cannot write %s: %s", self.path, exc)
            self._closed = True
            return
        self._set_writer(writer)
        self.flush()

    def _set_writer(self, writer: TraceWriter) -> None:
        self._writer = writer
        self._created = True
        if self._on_open is not None:
            self._on_open(self)

    def materialize(self) -> None:
        """Start writing (a replay session that needed a recording of its own)."""
        self.deferred = False
        self.flush()

    def close(self) -> None:
        """Write what is left and close the file."""
        if not self._created and self._opening is not None:
            self._set_writer(self._opening.result(timeout=30))
        self._opener = None
        self._on_open = None
        self._held = 0  # no scrub runs any more once the recorder closes
        self.flush()
        self._closed = True
        self.suspend()
