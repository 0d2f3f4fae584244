"""Reading a trace file for replay: the records replay answers from, and nothing built that it does not use.

Replay answers from the model calls, the failed attempts (``error`` records) and the exchanges of other
routes of a trace; the conversation records (messages, tool calls and results) are not used. A trace file
is decoded by msgspec in C, chunk by chunk as ``read_mirrored`` does, into structs made from the record
mirrors (``tracekit.trace.mirror``): the records replay uses are validated field by field as the models
would keep them, except that the bodies (``request``, ``response``, an error's ``body``) are kept as their
JSON bytes rather than built (replay keeps bytes anyway, and hashes requests from them:
``tracekit.proxy.raw_hashes``); every other record is checked to be a JSON object of a known kind and
skipped.

``read_for_replay`` gives None, and the caller reads the file into the models (which coerce what msgspec
refuses, report bad lines and put shared texts back), when the file is not an intact file of the current
format, when a record does not fit (a value of the wrong type, a body that is not an object where the model
wants one), or when a model call names shared texts (``tracekit.proxy.shared_texts``: they are resolved from
the conversation records). What this reader does not do that the models' reader does: report a conversation
record that is JSON but not a valid record (replay does not use it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union

import msgspec

from tracekit.trace.io import read_intact
from tracekit.trace.mirror import MIRRORS

#: The bodies left as JSON bytes, per record kind (a model call's must be objects: the others take any value).
_RAW = {"model_call": ("request", "response"), "error": ("body",), "http_exchange": ("request", "response")}
#: The bodies replay uses, per record kind.
_BODIES = {"model_call": ("request", "response"), "error": ("body",), "http_exchange": ("response",)}


def _struct(mirror: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """The struct replay reads a record of ``mirror``'s kind into."""
    kind: str = mirror.kind  # type: ignore[attr-defined]  # set on every mirror
    if kind == "header":
        return mirror
    bodies = _RAW.get(kind)
    if bodies is None:  # a record replay does not use: its kind is checked, its fields skipped unread
        return msgspec.defstruct(f"Skipped_{kind}", [], namespace={"kind": kind}, tag_field="kind", tag=kind,
                                 frozen=True, gc=False)  # fmt: skip
    fields: list[Any] = []
    for info in msgspec.structs.fields(mirror):
        if info.name in bodies:
            fields.append((info.name, msgspec.Raw, None))  # None when absent, the bytes ``null`` when null
        elif info.required:  # keyword-only fields: a required one may follow optional ones
            fields.append((info.name, info.type))
        elif info.default_factory is not msgspec.NODEFAULT:
            fields.append((info.name, info.type, msgspec.field(default_factory=info.default_factory)))
        else:
            fields.append((info.name, info.type, info.default))
    namespace = {"kind": kind}
    return msgspec.defstruct(f"Replay_{kind}", fields, namespace=namespace, tag_field="kind", tag=kind,
                             kw_only=True, frozen=True, gc=False)  # fmt: skip


_STRUCTS = tuple(_struct(mirror) for mirror in MIRRORS)
_DECODE_LINES = msgspec.json.Decoder(Union[_STRUCTS]).decode_lines  # noqa: UP007


def read_for_replay(path: str | Path) -> list[tuple[Any, tuple[bytes | None, ...]]] | None:
    """``(record, bodies)`` for each record of a trace file that replay uses (model calls, errors, exchanges of
    other routes, in file order; ``bodies``: the JSON bytes of its ``request`` and ``response``, or of an
    error's ``body``, None when absent or null), or None when the models must read the file (see the module
    docstring)."""
    records = read_intact(path, _decode_chunk)
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


def _decode_chunk(chunk: bytes) -> list[Any] | None:
    """The records of a chunk of whole lines, or None when a line does not fit one."""
    try:
        # Each line is decoded on its own (cheaper than one array of them all, as ``read_mirrored`` does); a
        # blank line yields no record, which the count below catches, and a torn line does not decode.
        records: list[Any] = _DECODE_LINES(chunk)
    except (msgspec.DecodeError, RecursionError):
        return None  # RecursionError: nested deeper than msgspec goes; the models' reader reports the line
    if len(records) != chunk.count(b"\n"):
        return None
    return records


__all__ = ["read_for_replay"]
