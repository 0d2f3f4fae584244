"""Writing result files (JSON, HTML, Markdown, XML, logs) through the one sanitizer, atomically.

Every file tracekit writes goes through ``tracekit.redact`` first: trace files via ``TraceWriter``,
everything else via these functions. A file appears whole or not at all: it is written to a temporary
file beside it and renamed over the target at the end, so a crash (or an error halfway through a streamed
JSON) never leaves half a file where a whole one was expected, and an earlier version stays until the new
one is complete.

A URL (``s3://bucket/results.json``, any fsspec URL: ``tracekit.storage``) is written the same way: the
bytes go to a local temporary file and are uploaded as one object when the block ends, never when it
raises. A ``file://`` URL is the local path it names.

Example::

    write_text("reports/summary.md", markdown)
    with atomic_output("results.json") as out:     # streamed: renamed into place only when the block ends
        out.write(b'{"traces": [')
        ...
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from tracekit.redact import Redactor, default_redactor
from tracekit.storage import atomic_upload, is_url, local


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[IO[bytes]]:
    """A binary file to write ``path`` through: created beside it (parents made), flushed and renamed over
    ``path`` when the block ends; removed, leaving ``path`` as it was, when the block raises. A URL is
    uploaded whole when the block ends (``tracekit.storage.atomic_upload``)."""
    path = local(path)
    if is_url(path):
        with atomic_upload(str(path)) as spool:
            yield spool
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
        os.chmod(temporary, _default_mode())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` (a local path or a URL) atomically (parents created); the caller has
    redacted it. Returns the path written (a URL as given: ``PurePosixPath`` would merge its ``//``)."""
    with atomic_output(path) as out:
        out.write(data)
    where = local(path)
    return where if isinstance(where, str) and is_url(where) else Path(where)  # type: ignore[return-value]


def write_text(path: str | Path, text: str, redactor: Redactor | None = None) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (parents created) with secrets redacted."""
    return write_bytes(path, (redactor or default_redactor()).redact_text(text).encode("utf-8"))


def write_json(path: str | Path, value: Any, redactor: Redactor | None = None, indent: bool = True) -> Path:
    """Write ``value`` as JSON (UTF-8, Chinese kept as is) atomically, with secrets redacted."""
    data = orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0)
    return write_bytes(path, (redactor or default_redactor()).redact_bytes(data))


_MODE: int | None = None


def _default_mode() -> int:
    """The permissions a newly created file gets (0o666 less the umask): mkstemp's own 0o600 is for secrets."""
    global _MODE
    if _MODE is None:
        mask = os.umask(0)
        os.umask(mask)
        _MODE = 0o666 & ~mask
    return _MODE
