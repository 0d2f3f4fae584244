"""Writing result files (JSON, HTML, Markdown, XML, logs) through the one sanitizer, atomically.

Every file tracekit writes goes through ``tracekit.redact`` first: trace files via ``TraceWriter``,
everything else via these functions. A file appears whole or not at all: it is written to a temporary
file beside it and renamed over the target at the end, so a crash (or an error halfway through a streamed
JSON) never leaves half a file where a whole one was expected, and an earlier version stays until the new
one is complete.

What a ``kill -9`` leaves: the temporary file, hidden and named for what it was
(``.results.json.tracekit-4242.k3j9x2ab.tmp``: the target, the writing process, ``.tmp``). The writer
holds a lock on it while it lives; the next write of the same target removes every such file whose
process is gone and whose lock is free. A folder of pages (the HTML report) is written the same way as a
whole: ``staged_folder`` builds it in a hidden ``.tracekit-staging.<pid>.*`` folder inside the target and
moves its entries into place only once every page is written, the index first, so a report folder never
holds pages without its ``index.html``; a staging folder left by a killed run is removed by the next one.

A URL (``s3://bucket/results.json``, any fsspec URL: ``tracekit.storage``) is written the same way: the
bytes go to a local temporary file and are uploaded as one object when the block ends, never when it
raises. A ``file://`` URL is the local path it names.

Example::

    write_text("reports/summary.md", markdown)
    with atomic_output("results.json") as out:     # streamed: renamed into place only when the block ends
        out.write(b'{"traces": [')
        ...
    with staged_folder("reports/html", owns=lambda name: name.endswith(".html")) as staging:
        (staging / "index.html").write_text(page)  # in place, with the rest, when the block ends
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from tracekit.redact import Redactor, default_redactor
from tracekit.storage import atomic_upload, is_url, local


@contextlib.contextmanager
def atomic_output(path: str | Path, *, sweep: bool = True) -> Iterator[IO[bytes]]:
    """A binary file to write ``path`` through: created beside it (parents made), flushed and renamed over
    ``path`` when the block ends; removed, leaving ``path`` as it was, when the block raises. A URL is
    uploaded whole when the block ends (``tracekit.storage.atomic_upload``).

    ``sweep``: first remove the temporary files of ``path`` that killed writers left (``sweep_abandoned``);
    off for pages written into a fresh staging folder, where there are none and listing is wasted."""
    path = local(path)
    if is_url(path):
        with atomic_upload(str(path)) as spool:
            yield spool
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if sweep:
        sweep_abandoned(path.parent, f".{path.name}.")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.{_OWNER}{os.getpid()}.", suffix=".tmp",
                                         dir=path.parent)  # fmt: skip
    try:
        _lock(handle)
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
            os.chmod(temporary, _default_mode())
            os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def staged_folder(folder: str | Path, owns: Callable[[str], bool], first: tuple[str, ...] = ("index.html",)
                  ) -> Iterator[Path]:  # fmt: skip
    """A hidden staging folder inside ``folder`` to write a set of pages into; when the block ends, its entries
    replace ``folder``'s, ``first`` first (the index, so that pages never stand without it), files renamed
    over, subfolders swapped whole. Entries of ``folder`` that ``owns(name)`` claims and the new set lacks
    (a page of an earlier, longer report) are removed; anything else in ``folder`` (the results JSON, the
    user's files) is left alone, and a subfolder holding anything but ``.html`` files is merged page by page
    rather than replaced. When the block raises, the staging folder is removed and ``folder`` is as it was.

    A run killed before the end leaves ``folder`` as it was plus the hidden staging folder, which the next
    call removes (``sweep_abandoned``). Only the moves at the end (renames: milliseconds) are not atomic
    as a whole; a kill among them leaves the new index with some of the old pages."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    sweep_abandoned(target, _STAGING)
    staging = Path(tempfile.mkdtemp(prefix=f"{_STAGING}{os.getpid()}.", dir=target))
    try:
        lock: int | None = os.open(staging, os.O_RDONLY)
    except OSError:  # a folder that cannot be opened to lock (Windows): the process check alone decides
        lock = None
    try:
        if lock is not None:
            _lock(lock)
        yield staging
        _move_into(staging, target, owns, first)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if lock is not None:
            os.close(lock)


def _move_into(staging: Path, target: Path, owns: Callable[[str], bool], first: tuple[str, ...]) -> None:
    """The commit of ``staged_folder``: every staged entry into ``target``, ``first`` first."""
    staged = sorted(os.listdir(staging), key=lambda name: (name not in first, name))
    replaced = staging / ".replaced"
    replaced.mkdir()
    for name in staged:
        source, destination = staging / name, target / name
        if not source.is_dir() or not destination.is_dir():
            if destination.is_dir():  # a folder where the new page goes: keep it aside, then replace it
                os.rename(destination, replaced / name)
            os.replace(source, destination)
        elif all(entry.endswith(".html") for entry in os.listdir(destination)):
            os.rename(destination, replaced / name)
            os.rename(source, destination)
        else:  # someone else's files in it (``--html .`` next to a case library in cases/): page by page
            for page in sorted(os.listdir(source)):
                os.replace(source / page, destination / page)
    new = set(staged)
    for name in sorted(os.listdir(target)):
        if name not in new and owns(name) and not name.startswith("."):
            os.rename(target / name, replaced / name)


def sweep_abandoned(folder: Path, prefix: str) -> None:
    """Remove what killed tracekit processes left in ``folder`` under names starting with ``prefix``: the
    temporary files of ``atomic_output`` and the staging folders of ``staged_folder``. One is abandoned when
    the process named in it is gone and nobody holds its lock (another run writing the same target at this
    moment keeps both, whatever its process id means on this machine)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix):
            continue
        match = _OWNED.fullmatch(name, len(prefix))
        if match is None or not _abandoned(folder / name, int(match.group(1))):
            continue
        if (folder / name).is_dir():
            shutil.rmtree(folder / name, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(folder / name)


_OWNER = "tracekit-"
_STAGING = ".tracekit-staging."
#: What follows the prefix in the name of a temporary file or staging folder: the process id, mkstemp's part.
_OWNED = re.compile(rf"(?:{_OWNER})?(\d+)\.\w+(?:\.tmp)?")


def _abandoned(path: Path, pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
        return False  # that process is alive (ours or another's: leave it)
    except ProcessLookupError:
        pass
    except OSError:
        return False
    try:
        handle = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return _lock(handle, wait=False)
    finally:
        os.close(handle)


def _lock(handle: int, wait: bool = True) -> bool:
    """An exclusive lock on an open file or folder, held until it is closed or the process dies; False when
    someone else holds it (``wait=False``). Where there are no such locks (Windows) it is always taken."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    except OSError:  # a filesystem without locks: the process check alone decides
        return True
    return True


def write_bytes(path: str | Path, data: bytes, *, sweep: bool = True) -> Path:
    """Write ``data`` to ``path`` (a local path or a URL) atomically (parents created); the caller has
    redacted it. Returns the path written (a URL as given: ``PurePosixPath`` would merge its ``//``).
    ``sweep``: as for ``atomic_output``."""
    with atomic_output(path, sweep=sweep) as out:
        out.write(data)
    where = local(path)
    return where if isinstance(where, str) and is_url(where) else Path(where)  # type: ignore[return-value]


def write_text(path: str | Path, text: str, redactor: Redactor | None = None, *, sweep: bool = True) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (parents created) with secrets redacted."""
    return write_bytes(path, (redactor or default_redactor()).redact_text(text).encode("utf-8"), sweep=sweep)


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
