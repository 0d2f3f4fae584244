"""Reading a trace file for replay: the records replay answers from, and nothing built that it does not use.

Replay answers from the model calls, the failed attempts (``error`` records) and the exchanges of other
routes of a trace; the conversation records (messages, tool calls and results) are not used. A trace file
is read by the trace reader's fast mode through a ``Projection`` of the record mirrors
(``tracekit.trace.mirror``): the records replay uses are validated field by field as the models would keep
them, except that the bodies (``request``, ``response``, an error's ``body``) are kept as their JSON bytes
rather than built (replay keeps bytes anyway, and hashes requests from them: ``tracekit.proxy.raw_hashes``);
every other record is checked to be a JSON object of a known kind and skipped.

``read_for_replay`` gives None, and the caller reads the file into the models (which coerce what msgspec
refuses, report bad lines and put shared texts back), when the file is not an intact file of the current
format, when a record does not fit (a value of the wrong type, a body that is not an object where the model
wants one), or when a model call names shared texts (``tracekit.proxy.shared_texts``: they are resolved from
the conversation records). What this reader does not do that the models' reader does: report a conversation
record that is JSON but not a valid record (replay does not use it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from tracekit.trace.mirror import Projection, read_mirrored

#: The bodies replay uses, per record kind.
_BODIES = {"model_call": ("request", "response"), "error": ("body",), "http_exchange": ("response",)}
#: The records replay reads, with their bodies left as JSON bytes (a model call's must be objects).
REPLAY = Projection(
    {"model_call": ("request", "response"), "error": ("body",), "http_exchange": ("request", "response")}
)


def read_for_replay(path: str | Path) -> list[tuple[Any, tuple[bytes | None, ...]]] | None:
    """``(record, bodies)`` for each record of a trace file that replay uses (model calls, errors, exchanges of
    other routes, in file order; ``bodies``: the JSON bytes of its ``request`` and ``response``, or of an
    error's ``body``, None when absent or null), or None when the models must read the file (see the module
    docstring)."""
    records = read_mirrored(path, REPLAY)
    if records is None:
        return None
    used = []
    for record in records:
        kind = record.kind
        names = _BODIES.get(kind)
        if names is None:
            continue
        if kind == "model_call" and record.shared_texts:
            return None
        bodies = tuple(_bytes(getattr(record, name)) for name in names)
        if kind == "model_call" and any(body is not None and body[:1] != b"{" for body in bodies):
            return None  # the model wants an object or null
        used.append((record, bodies))
    return used


def _bytes(raw: msgspec.Raw | None) -> bytes | None:
    if raw is None:
        return None
    data = bytes(raw)
    return None if data == b"null" else data


__all__ = ["read_for_replay"]
