"""Reading an inspect_ai ``.eval`` log (a zip) within bounds: what ``tracekit import inspect`` takes from a
hostile archive (docs/importers.md, "Hostile input").

An entry is decompressed to at most ``MAX_ENTRY_BYTES`` and a log to ``MAX_LOG_BYTES`` in all; encrypted
entries, compression methods other than stored, deflate, bzip2, lzma and zstd, and entries whose data overlap
(one way to make a small zip inflate without bound) are refused by name. inspect_ai compresses entries with
zstd (zip method 93), which ``zipfile`` of Python 3.10 to 3.13 cannot read: the central directory is read by
``zipfile``, the data by ``zstandard``, checked against the entry's CRC-32.

Example::

    with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
        data = read_entry(archive, raw, archive.getinfo("header.json"))
"""

from __future__ import annotations

import io
import itertools
import lzma
import zipfile
import zlib
from typing import Any

import orjson

from tracekit.importers.common import TOO_DEEP, too_deep

_ZSTD = 93  # zip compression method number of Zstandard (PKWARE APPNOTE 4.4.5)
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
            zipfile.ZIP_LZMA: "lzma", _ZSTD: "zstd"}  # fmt: skip
#: The most one ``.eval`` entry (one sample) may inflate to; larger entries are refused unread.
MAX_ENTRY_BYTES = 512 * 2**20
#: The most all the entries of one ``.eval`` may inflate to together.
MAX_LOG_BYTES = 2 * 2**30
#: Entry flags ``read_entry`` refuses before zipfile sees them: encrypted (bit 0), compressed patched data
#: (bit 5) and strong encryption (bit 6), which zipfile cannot read (PKWARE APPNOTE 4.4.4).
_UNREADABLE_FLAGS = {0x1: "encrypted", 0x20: "compressed patched data", 0x40: "strongly encrypted"}
#: What reading a damaged zip entry can still raise (besides ``DATA_ERRORS``), once ``read_entry`` refused the
#: flags and methods zipfile cannot read: zipfile's own errors and a truncated or corrupt stream.
ZIP_ERRORS = (OSError, zipfile.BadZipFile, zlib.error, EOFError, lzma.LZMAError)


def entry_json(archive: zipfile.ZipFile, raw: Any, info: zipfile.ZipInfo, budget: list[int]) -> Any:
    """The JSON of one entry, read within ``budget[0]`` bytes (what is read is taken off the budget)."""
    data = read_entry(archive, raw, info, limit=min(MAX_ENTRY_BYTES, budget[0]))
    budget[0] -= len(data)
    value = orjson.loads(data)
    if too_deep(value):
        raise ValueError(TOO_DEEP)
    return value


def overlapping(infos: list[zipfile.ZipInfo]) -> str | None:
    """The names of two entries whose data overlap, if any (each entry's local header and data must end
    before the next one starts)."""
    ordered = sorted(infos, key=lambda info: info.header_offset)
    for before, after in itertools.pairwise(ordered):
        end = before.header_offset + 30 + len(before.orig_filename.encode()) + before.compress_size
        if after.header_offset < end:
            return f"{before.filename} and {after.filename}"
    return None


def read_entry(archive: zipfile.ZipFile, raw: Any, info: zipfile.ZipInfo, limit: int = MAX_ENTRY_BYTES) -> bytes:
    """The bytes of one zip entry, at most ``limit`` of them: zstd (method 93) read here, the other methods
    by ``zipfile``. ``ValueError`` for an entry that is encrypted, compressed by an unknown method, larger
    than ``limit`` or damaged (its CRC-32 or size does not match the directory)."""
    refused = [what for bit, what in _UNREADABLE_FLAGS.items() if info.flag_bits & bit]
    if refused:
        raise ValueError(f"the entry is {' and '.join(refused)}; tracekit reads plain logs only")
    if info.compress_type not in _METHODS:
        raise ValueError(f"compression method {info.compress_type} is not one of "
                         f"{', '.join(_METHODS.values())}")
    if info.file_size > limit:
        raise ValueError(f"the entry inflates to {info.file_size:,} bytes, more than the limit of {limit:,}")
    if info.compress_type != _ZSTD:
        # zipfile stops at the size the directory gives (checked against the limit above) and checks the
        # CRC-32 at the end of the entry.
        with archive.open(info) as entry:
            return entry.read(info.file_size + 1)
    import zstandard  # a core dependency; imported here as only .eval logs need it

    raw.seek(info.header_offset)
    local = raw.read(30)
    if local[:4] != b"PK\x03\x04":
        raise ValueError("bad local file header")
    raw.seek(info.header_offset + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little"))
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw.read(info.compress_size)))
        chunks, wanted = [], info.file_size + 1  # at most one byte past the size the directory gives
        while wanted > 0 and (chunk := reader.read(min(wanted, 2**20))):
            chunks.append(chunk)
            wanted -= len(chunk)
        data = b"".join(chunks)
    except zstandard.ZstdError as exc:
        raise ValueError(f"zstd: {exc}") from exc
    if zlib.crc32(data) != info.CRC or len(data) != info.file_size:
        raise ValueError("CRC-32 or size does not match the zip directory (damaged entry)")
    return bytes(data)
