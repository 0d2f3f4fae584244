"""Trace files of the proxy: appended one exchange at a time, every line through the redactor.

``TraceFile`` is the proxy's writer: like ``tracekit.trace.TraceWriter`` it serializes each record with
orjson and passes every line through the redactor, but it writes all the records of one exchange with
one system call and serializes records without pydantic's JSON-mode walk over large request bodies
(orjson serializes them directly), which keeps recording cheap next to the traffic it records.

No record can stop a file: text that is not UTF-8 is mended, and a record that still cannot be written is
replaced by an ``error`` record saying so. A file can be held (its records wait in memory) while it is
scrubbed again with secrets learnt after it was written (``scrub``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import BaseModel

from tracekit.proxy.shared_texts import SharedTexts
from tracekit.redact import Redactor
from tracekit.trace import TraceBuilder
from tracekit.trace.models import Header

log = logging.getLogger(__name__)


def record_line(record: BaseModel) -> bytes:
    """One record as a JSON line (no trailing newline), None fields left out as ``TraceWriter`` does."""
    # The model's own fields, then its extra ones: what iterating the model gives, without pydantic's
    # Python-level iterator (a tenth of recording's cost under load).
    fields = {name: value for name, value in record.__dict__.items() if value is not None and name[0] != "_"}
    extra = getattr(record, "__pydantic_extra__", None)
    if extra:
        fields.update((name, value) for name, value in extra.items() if value is not None)
    try:
        return orjson.dumps(fields, default=_dump_model)
    except TypeError:  # a lone surrogate somewhere (text that was not UTF-8): mend it rather than lose the record
        return orjson.dumps(_mended(fields), default=_dump_model)


def _mended(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, BaseModel):
        return _mended(value.model_dump(mode="python", exclude_none=True))
    if isinstance(value, dict):
        return {_mended(key): _mended(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mended(item) for item in value]
    return value


def _unwritable(record: BaseModel, exc: Exception) -> bytes:
    """The line written instead of a record that cannot be serialized."""
    kind = getattr(record, "kind", type(record).__name__)
    message = f"tracekit could not write a {kind} record ({type(exc).__name__}: {exc})"
    return orjson.dumps({"t": getattr(record, "t", None), "kind": "error", "source": "proxy", "message": message})


def _dump_model(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    raise TypeError(f"cannot serialize {type(value).__name__} as JSON")


class TraceFile:
    """An append-only trace file."""

    def __init__(self, path: Path, redactor: Redactor, *, fsync: bool = False) -> None:
        self.path = path
        try:
            self._file: IO[bytes] = open(path, "ab")  # noqa: SIM115 - closed by close()
        except FileNotFoundError:  # (the folder is made only when missing: a mkdir per file costs under load)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "ab")  # noqa: SIM115
        self._redactor = redactor
        self._fsync = fsync

    def write(self, records: Iterable[BaseModel]) -> None:
        """Append ``records`` (redacted, one line each) with one write, flushed (and fsynced if asked)."""
        lines = []
        for record in records:
            try:
                lines.append(record_line(record))
            except Exception as exc:  # never let one record keep the others (and later ones) off the disk
                log.error("tracekit: could not write a record to %s: %s", self.path, exc)
                lines.append(_unwritable(record, exc))
        if not lines:
            return
        # One pass over the joined lines: the patterns never span a newline, so this is line by line.
        self._file.write(self._redactor.redact_bytes(b"\n".join(lines) + b"\n"))
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file."""
        self._file.close()


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
        self._opening: Future[TraceFile] | None = None
        self._writer: TraceFile | None = None
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
            self._writer.write(records)
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
            self._set_writer(TraceFile(self.path, self._redactor, fsync=self._fsync))
            return True
        try:
            self._opening = self._opener.submit(TraceFile, self.path, self._redactor, fsync=self._fsync)
        except RuntimeError:  # the helper thread has stopped (the proxy is closing): open here
            self._set_writer(TraceFile(self.path, self._redactor, fsync=self._fsync))
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

    def _set_writer(self, writer: TraceFile) -> None:
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
