"""What is wrong with a line of a trace file, in words a person can act on: the ``ReadProblem`` messages and
the header errors of the reader (``tracekit.trace.io``), each naming the field."""

from __future__ import annotations

import re
from typing import Any

import orjson
from pydantic import ValidationError

#: orjson refuses JSON nested deeper than this.
JSON_DEPTH_LIMIT = 1024

_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"\s*(:)?|[\[\]{}]')
_KIND = re.compile(rb'"kind"\s*:\s*"([a-z_]{1,40})"')


def unparsable_line(line: bytes, exc: orjson.JSONDecodeError, torn: bool) -> str:
    """What is wrong with a line that is not JSON."""
    if torn:
        return "torn last line (the writer stopped mid-record)"
    if "depth limit" not in str(exc):
        return f"not JSON ({exc})"
    kind = _KIND.search(line)
    field = ".".join(part for part in (kind.group(1).decode() if kind else None, _deep_field(line)) if part)
    return f"{field or 'record'}: nested deeper than {JSON_DEPTH_LIMIT} levels, more than tracekit reads"


def _deep_field(line: bytes) -> str | None:
    """The top-level key of the record whose value nests deepest first (scanned up to the depth limit)."""
    depth, key = 0, None
    for token in _TOKEN.finditer(line):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
            if depth > JSON_DEPTH_LIMIT:
                break
        elif text in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and token.group(1):
            key = text[: text.rindex(b'"') + 1]
    if key is None:
        return None
    try:
        return str(orjson.loads(key))
    except orjson.JSONDecodeError:
        return None



def invalid_record(exc: ValidationError) -> str:
    """``invalid record: FIELD: message`` for the first error of a record that is JSON but not a valid record."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "record"
    return f"invalid record: {where}: {first['msg']}"


def header_field_error(exc: ValidationError) -> str:
    """``field NAME: message, got VALUE`` for the first error of a header (its ``loc`` begins with the kind)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"][1:]) or "record"
    return f"field {where}: {first['msg']}, got {shown(first.get('input'))}"


def shown(value: Any) -> str:
    """A value as JSON, shortened to a readable length."""
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
