"""Where files live: local paths, or any fsspec URL (``s3://``, ``gs://``, ``memory://``, ...).

Every command that reads traces, cases or results, and every output, goes through here, so one URL works
wherever a path does. A local path (or a ``file://`` URL, turned into one) never touches fsspec: reading
it costs what it always cost. Anything else goes through ``fsspec``, imported only when a URL is used, so
``import tracekit`` stays light.

Credentials come from the environment the way each filesystem library finds them (for S3: the
``AWS_*`` variables, ``~/.aws``, an instance role; ``AWS_ENDPOINT_URL`` for an S3-compatible server);
tracekit never asks for them, stores them or writes them anywhere.

Listing is lazy: ``iter_files`` yields file names a page of the listing at a time (S3: 1,000 keys per
request), so a prefix of a million objects is never listed into memory first.

Example::

    for url in iter_files("s3://bucket/traces", ".jsonl"):
        with open_read(url) as handle:
            first = handle.readline()
    with atomic_output("s3://bucket/results.json") as out:   # uploaded whole, only when the block ends
        out.write(b"{}")
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from tracekit.errors import StorageError

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")

#: Filesystem libraries by scheme, for the message when one is not installed.
_EXTRAS = {"s3": "tracekit[s3] (s3fs)", "s3a": "tracekit[s3] (s3fs)", "gs": "gcsfs", "gcs": "gcsfs",
           "az": "adlfs", "abfs": "adlfs", "abfss": "adlfs"}  # fmt: skip


def is_url(path: str | Path) -> bool:
    """Whether ``path`` is a URL that needs fsspec (``file://`` URLs are local paths: see ``local``).

    >>> is_url("s3://bucket/x.jsonl"), is_url("recordings/x.jsonl"), is_url("file:///tmp/x")
    (True, False, False)
    """
    if not isinstance(path, str):
        return False
    match = _URL.match(path)
    return match is not None and match.group(1).lower() != "file"


def local(path: str | Path) -> str | Path:
    """``path`` with a ``file://`` URL turned into the local path it names; anything else as given.

    >>> local("file:///tmp/x.jsonl"), local("s3://b/k")
    ('/tmp/x.jsonl', 's3://b/k')
    """
    if isinstance(path, str) and path[:7].lower() == "file://":
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(path).path) or "/"
    return path


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem serving ``url`` and the path within it; ``StorageError`` for a scheme no
    installed library serves."""
    scheme = url.split("://", 1)[0].lower()
    try:
        import fsspec.core
    except ImportError:
        raise StorageError(f"{url}: reading URLs needs fsspec: pip install 'tracekit[s3]'") from None
    try:
        fs, inner = fsspec.core.url_to_fs(url)
    except ImportError:
        extra = _EXTRAS.get(scheme, f"the fsspec filesystem for {scheme}://")
        raise StorageError(f"{url}: no filesystem library for {scheme}:// is installed: pip install {extra}") from None
    except ValueError as exc:
        if "Protocol not known" in str(exc) or "not known" in str(exc):
            raise StorageError(
                f"{url}: unknown URL scheme {scheme}:// (use a local path, file://, s3://, gs:// or another "
                "fsspec URL)"
            ) from None
        raise StorageError(f"{url}: {exc}") from None
    return fs, inner


def storage_error(url: str, exc: BaseException) -> StorageError:
    """One clear line for an error of a filesystem library: missing credentials, no such bucket or object,
    access denied, an endpoint that does not answer."""
    name = type(exc).__name__
    text = str(exc)
    if name in ("NoCredentialsError", "PartialCredentialsError") or "Unable to locate credentials" in text:
        return StorageError(
            f"{url}: no credentials for {url.split('://', 1)[0]}:// found in the environment (set AWS_ACCESS_KEY_ID "
            "and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE; AWS_ENDPOINT_URL for an S3-compatible server)"
        )
    if isinstance(exc, FileNotFoundError) or "NoSuchBucket" in text or "NoSuchKey" in text:
        return StorageError(f"{url}: no such file, folder or bucket")
    if isinstance(exc, PermissionError) or "AccessDenied" in text or "InvalidAccessKeyId" in text:
        return StorageError(f"{url}: access denied ({_first_line(text)}); check the credentials in the environment")
    if name in ("EndpointConnectionError", "ConnectTimeoutError", "ClientConnectorError") or isinstance(
        exc, ConnectionError
    ):
        return StorageError(f"{url}: cannot reach the storage endpoint ({_first_line(text)})")
    return StorageError(f"{url}: {name}: {_first_line(text)}")


#: A URL is first read up to this many bytes in one request; a larger object is then streamed in blocks.
FIRST_READ = 4 * 1024 * 1024


@contextlib.contextmanager
def open_read(path: str | Path) -> Iterator[IO[bytes]]:
    """A binary file to read ``path`` from (a local file as the builtin ``open`` gives it)."""
    path = local(path)
    if not is_url(path):
        with open(path, "rb") as handle:
            yield handle
        return
    url = str(path)
    fs, inner = filesystem(url)
    try:
        # Most traces are small: one ranged GET reads them whole (fs.open would first ask for the size).
        first = fs.cat_file(inner, start=0, end=FIRST_READ)
        stream: IO[bytes] = io.BytesIO(first) if len(first) < FIRST_READ else fs.open(inner, "rb")
    except Exception as exc:
        raise storage_error(url, exc) from None
    with stream:
        yield stream


def read_bytes(path: str | Path) -> bytes:
    """The whole content of the file at ``path`` (a local path or a URL)."""
    with open_read(path) as handle:
        return handle.read()


def size_of(handle: IO[bytes]) -> int:
    """The size in bytes of an open file (local or fsspec)."""
    try:
        return os.fstat(handle.fileno()).st_size
    except (AttributeError, OSError, ValueError):  # an fsspec file has no descriptor
        size = getattr(handle, "size", None)
        if isinstance(size, int):
            return size
        position = handle.tell()
        end = handle.seek(0, os.SEEK_END)
        handle.seek(position)
        return end


def path_size(path: str | Path) -> int:
    """The size in bytes of the file at ``path``."""
    path = local(path)
    if not is_url(path):
        return os.path.getsize(path)
    fs, inner = filesystem(str(path))
    try:
        return int(fs.size(inner))
    except Exception as exc:
        raise storage_error(str(path), exc) from None


def kind(path: str | Path) -> str | None:
    """``"file"``, ``"directory"`` (a folder, or an object-store prefix holding objects), or None when
    nothing is there."""
    path = local(path)
    if not is_url(path):
        return "directory" if os.path.isdir(path) else "file" if os.path.isfile(path) else None
    url = str(path)
    fs, inner = filesystem(url)
    try:
        info = fs.info(inner)
    except FileNotFoundError:
        return None
    except Exception as exc:
        raise storage_error(url, exc) from None
    return "directory" if info.get("type") == "directory" else "file"


def iter_files(url: str, suffix: str) -> Iterator[str]:
    """The files under the folder or prefix ``url`` whose names end with ``suffix``, as URLs, lazily.

    On an object store whose filesystem pages its listing (s3fs), keys come a page at a time in the store's
    order (lexicographic by key); on any other filesystem, one folder is listed at a time, depth first,
    names sorted. Either way the order is stable, and memory holds one page or one folder of names."""
    fs, inner = filesystem(url)
    scheme = url.split("://", 1)[0]
    try:
        pages = _paged_keys(fs, inner)
        names = pages if pages is not None else _walk(fs, inner.rstrip("/"))
        for name in names:
            if name.endswith(suffix):
                yield f"{scheme}://{name}"
    except StorageError:
        raise
    except Exception as exc:
        raise storage_error(url, exc) from None


def _paged_keys(fs: Any, inner: str) -> Iterator[str] | None:
    """Keys under ``inner`` from a paged listing (s3fs ``_iterdir``, ListObjectsV2 without delimiter), or
    None when the filesystem has none."""
    iterdir = getattr(fs, "_iterdir", None)
    loop = getattr(fs, "loop", None)
    if iterdir is None or loop is None:
        return None
    bucket, _, prefix = inner.rstrip("/").partition("/")
    if prefix:
        prefix += "/"

    import asyncio  # only for a paged listing: asyncio is a tenth of `tracekit analyze`'s start-up

    def keys() -> Iterator[str]:
        pages = iterdir(bucket, delimiter="", prefix=prefix)
        while True:
            try:
                info = asyncio.run_coroutine_threadsafe(pages.__anext__(), loop).result()
            except StopAsyncIteration:
                return
            if info.get("type") == "file":
                yield info["name"]

    return keys()


def _walk(fs: Any, folder: str) -> Iterator[str]:
    """Depth first, names sorted in each folder (the order of the local listing)."""
    entries = sorted(fs.ls(folder, detail=True), key=lambda entry: entry["name"])
    for entry in entries:
        if entry.get("type") == "directory":
            yield from _walk(fs, entry["name"].rstrip("/"))
        else:
            yield entry["name"]


@contextlib.contextmanager
def atomic_upload(url: str) -> Iterator[IO[bytes]]:
    """A binary file whose bytes are uploaded to ``url`` as one object when the block ends, and never when
    it raises: written to a local temporary file first (an object store shows an object whole or not at all)."""
    fs, inner = filesystem(url)
    with tempfile.TemporaryFile(prefix=".tracekit-upload.") as spool:
        yield spool
        spool.flush()
        spool.seek(0)
        try:
            parent = inner.rsplit("/", 1)[0]
            if parent and parent != inner:
                with contextlib.suppress(Exception):  # object stores have no folders to make
                    fs.makedirs(parent, exist_ok=True)
            with fs.open(inner, "wb") as target:
                while block := spool.read(8 * 1024 * 1024):
                    target.write(block)
        except Exception as exc:
            raise storage_error(url, exc) from None


def join(base: str, *parts: str) -> str:
    """``base`` (a local path or URL) with ``parts`` appended, with ``/`` for URLs.

    >>> join("s3://b/reports", "index.html")
    's3://b/reports/index.html'
    """
    if is_url(base):
        return "/".join([base.rstrip("/"), *(part.strip("/") for part in parts)])
    return os.path.join(local(base), *parts)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "no detail"
    return line if len(line) <= 200 else line[:199] + "…"
