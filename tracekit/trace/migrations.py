"""Upgrading trace records written by older tracekit versions.

Each step upgrades the records of one format to the next, in place of the reader having to know every
old shape. A file whose header names a format newer than ``FORMAT_VERSION`` is refused with a message
telling the person to upgrade tracekit. (The chain idea follows mitmproxy's ``io/compat.py``.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracekit.errors import TraceFormatError
from tracekit.trace.models import FORMAT_VERSION

RawRecord = dict[str, Any]

#: format N -> function upgrading one raw record of format N to format N + 1.
MIGRATIONS: dict[int, Callable[[RawRecord], RawRecord]] = {}


def migration(from_format: int) -> Callable[[Callable[[RawRecord], RawRecord]], Callable[[RawRecord], RawRecord]]:
    """Register the function that upgrades records of ``from_format`` to ``from_format + 1``."""

    def register(function: Callable[[RawRecord], RawRecord]) -> Callable[[RawRecord], RawRecord]:
        MIGRATIONS[from_format] = function
        return function

    return register


@migration(0)
def _from_draft(record: RawRecord) -> RawRecord:
    """Format 0 (the pre-release draft) named the header's version ``version`` and the error flag ``error``."""
    if record.get("kind") == "header" and "version" in record:
        record["format"] = record.pop("version")
    if record.get("kind") == "tool_result" and "error" in record:
        record["is_error"] = bool(record.pop("error"))
    return record


def upgrade_record(record: RawRecord, file_format: int, where: str) -> RawRecord:
    """Bring one raw record from ``file_format`` up to ``FORMAT_VERSION``."""
    if file_format > FORMAT_VERSION:
        raise TraceFormatError(
            f"{where}: trace format {file_format} is newer than this tracekit reads ({FORMAT_VERSION}); "
            "upgrade tracekit to read it"
        )
    for step in range(file_format, FORMAT_VERSION):
        record = MIGRATIONS[step](record)
    if record.get("kind") == "header":
        record["format"] = FORMAT_VERSION
    return record


def header_format(raw_header: RawRecord) -> int:
    """The format a raw header declares (format 0 files said ``version``)."""
    value = raw_header.get("format", raw_header.get("version", 0))
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
