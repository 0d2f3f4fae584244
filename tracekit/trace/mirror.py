"""Read-only mirrors of the record models: the fast mode of the trace reader (``load_trace(path, fast=True)``,
``read_mirrored``), whole or as a ``Projection`` (replay's reads only the records and bodies it answers from).

Analysis reads every record of every trace and changes none. Validating into the pydantic models costs
more than twice an orjson parse of the same lines, and each attribute read on a model goes through
pydantic's ``__getattr__`` hook. A mirror is a ``msgspec.Struct`` generated from a record model's own
fields (same names, types, defaults and properties, e.g. ``AssistantMessage.text``), decoded and
validated by msgspec in C for less than an orjson parse, with plain slot attributes.

What a mirror is not: an instance of its model (pydantic turns virtual subclasses off), so code that may
get either tells records apart by ``record.kind``; it has no pydantic methods (``model_dump`` and the
like) and keeps no extra fields (``extra="allow"`` keys a newer writer added). Code that writes records
or shows them whole reads the models (``load_trace(path)``).

msgspec is strict where pydantic is lax (``"5"`` for an int, ``1.0`` for an int, ``true`` for an int),
so a file with any such value, or anything else a mirror does not accept, is read into the models
instead, which coerce it or report the line; the values a mirror accepts are the ones the model keeps
as they are (an int given for a float field becomes a float in both).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, Union

import msgspec
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from tracekit.trace.io import read_intact
from tracekit.trace.models import RECORD_CLASSES


@cache
def _mirror(model: type[BaseModel], tagged: bool) -> type[msgspec.Struct]:
    """The Struct mirroring ``model`` (``tagged``: a record, told apart by its ``kind``)."""
    required: list[tuple[str, Any]] = []
    optional: list[tuple[str, Any, Any]] = []
    for name, info in model.model_fields.items():
        if tagged and name == "kind":
            continue  # the tag: msgspec matches it, and the class attribute below answers ``record.kind``
        annotation = _mirrored(info.annotation)
        if info.default_factory is not None:
            optional.append((name, annotation, msgspec.field(default_factory=_mirrored(info.default_factory))))
        elif info.default is PydanticUndefined:
            required.append((name, annotation))
        else:
            optional.append((name, annotation, info.default))
    namespace: dict[str, Any] = {key: value for key, value in vars(model).items() if isinstance(value, property)}
    options: dict[str, Any] = {}
    if tagged:
        kind = model.model_fields["kind"].default
        namespace["kind"] = kind
        options = {"tag_field": "kind", "tag": kind}
    # gc=False: records hold no reference cycles, and untracked objects cost the collector nothing.
    return msgspec.defstruct(
        model.__name__, [*required, *optional], namespace=namespace, kw_only=True, frozen=True, gc=False, **options
    )


def _mirrored(value: Any) -> Any:
    """A nested model (``ModelCall.usage``) is mirrored too; anything else is used as it is."""
    if isinstance(value, type) and issubclass(value, BaseModel):
        return _mirror(value, tagged=False)
    return value


MIRRORS: tuple[type[msgspec.Struct], ...] = tuple(_mirror(model, tagged=True) for model in RECORD_CLASSES)
"""One mirror per record class, in the order of ``RECORD_CLASSES``."""



class Projection:
    """Which records of a trace a reader keeps, and how: every record whole (``Projection()``), or only the
    kinds of ``raw``, each with the fields it names left as their JSON bytes (``msgspec.Raw``: None when
    absent, the bytes ``null`` when null) instead of being built. A record of another kind is still checked
    to be a JSON object of a known kind, then skipped unread (decoded as a struct with no fields).

    Example (replay's projection, ``tracekit.proxy.replay_reader``)::

        REPLAY = Projection({"model_call": ("request", "response"), "error": ("body",)})
        records = read_mirrored(path, REPLAY)
    """

    def __init__(self, raw: dict[str, tuple[str, ...]] | None = None) -> None:
        self.raw = raw
        structs = MIRRORS if raw is None else tuple(_projected(mirror, raw) for mirror in MIRRORS)
        self.decode_lines = msgspec.json.Decoder(Union[structs]).decode_lines  # noqa: UP007


def _projected(mirror: type[msgspec.Struct], raw: dict[str, tuple[str, ...]]) -> type[msgspec.Struct]:
    """The struct a projection reads a record of ``mirror``'s kind into."""
    kind: str = mirror.kind  # type: ignore[attr-defined]  # set on every mirror
    if kind == "header":
        return mirror
    bodies = raw.get(kind)
    if bodies is None:  # a record the projection leaves out: its kind is checked, its fields skipped unread
        return msgspec.defstruct(f"Skipped_{kind}", [], namespace={"kind": kind}, tag_field="kind", tag=kind,
                                 frozen=True, gc=False)  # fmt: skip
    fields: list[Any] = []
    for info in msgspec.structs.fields(mirror):
        if info.name in bodies:
            fields.append((info.name, msgspec.Raw, None))
        elif info.required:  # keyword-only fields: a required one may follow optional ones
            fields.append((info.name, info.type))
        elif info.default_factory is not msgspec.NODEFAULT:
            fields.append((info.name, info.type, msgspec.field(default_factory=info.default_factory)))
        else:
            fields.append((info.name, info.type, info.default))
    return msgspec.defstruct(f"{kind}_projected", fields, namespace={"kind": kind}, tag_field="kind", tag=kind,
                             kw_only=True, frozen=True, gc=False)  # fmt: skip


WHOLE = Projection()
"""Every record, every field: the mirrors ``load_trace(path, fast=True)`` gives."""


def read_mirrored(
    path: str | Path, projection: Projection = WHOLE, slim: Callable[[Any], Any] | None = None
) -> list[Any] | None:
    """The records of a trace file as mirrors (or as ``projection`` keeps them), header first; None when the
    file is not an intact file of the current format whose every record a mirror accepts (read it into the
    models then, which say what is wrong where). Read a chunk of lines at a time: memory holds the mirrors
    and one chunk of bytes.

    ``slim``: what is kept of each record of a file larger than one chunk, given the whole mirror (checked as
    every mirror is) as soon as its chunk is decoded, e.g. the record without its bodies
    (``msgspec.structs.replace``): memory then holds what ``slim`` keeps, and one chunk's records whole. A file
    of one chunk is held whole while decoded, so its records are kept whole (slimming them would save no peak
    memory and cost a tenth of the analysis of a small trace)."""
    decode_lines = projection.decode_lines

    def decode_chunk(chunk: bytes) -> list[Any] | None:
        try:
            # Each line is decoded on its own (a fifth cheaper than one array of them all); a blank line yields
            # no record, which the count below catches, and a torn line does not decode.
            records: list[Any] = decode_lines(chunk)
        except (msgspec.DecodeError, RecursionError):
            # RecursionError: a value nested deeper than msgspec goes (about 1000 levels); the models' reader
            # reports the line.
            return None
        if len(records) != chunk.count(b"\n"):
            return None
        return records

    return read_intact(path, decode_chunk, keep=slim)
