"""Secrets a model streams in pieces: found in the joined text of the stream, replaced in its pieces.

A key the model writes in 3- or 4-character deltas (``"text":"sk-a"``, ``"text":"nt-a"``, ...) is in no
single line of a recorded stream, so scanning the stream's text finds nothing, and replay would serve it
whole. ``redact_stream`` reads each event's JSON, joins the strings of each channel (the same JSON path in
the same content block: Anthropic's ``index``, the Responses API's ``output_index`` / ``content_index``,
OpenAI's ``choices[0].delta.content``) in stream order, finds the secrets in the joined text, and rewrites
the pieces so that their join holds ``[REDACTED]`` where the secret was: the replacement goes in the piece
where the secret starts, the rest of the secret is taken out of the pieces that held it. Events with no
piece of a secret keep their bytes exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:  # (the redactor imports this module)
    from tracekit.redact import Redactor

REPLACEMENT = "[REDACTED]"
_DATA = "data:"


_Piece = tuple[int, tuple[Any, ...], str]
"""A string of the stream: the index of the ``data:`` line whose JSON holds it, its path there, its text."""


def redact_stream(sse: str, redactor: Redactor) -> str:
    """``sse`` (an SSE stream's text) with every secret of its joined deltas replaced (see the module docstring)."""
    lines = sse.split("\n")
    payloads: dict[int, Any] = {}
    channels: dict[tuple[Any, ...], list[_Piece]] = {}
    for number, line in enumerate(lines):
        if not line.startswith(_DATA):
            continue
        try:
            payload = orjson.loads(line[len(_DATA):])
        except orjson.JSONDecodeError:
            continue
        payloads[number] = payload
        block = tuple(sorted((k, v) for k, v in payload.items() if k.endswith("index") and isinstance(v, int))) \
            if isinstance(payload, dict) else ()
        for path, text in _strings(payload, ()):
            pieces = channels.get((block, path))
            if pieces is None:
                pieces = channels[(block, path)] = []
            pieces.append((number, path, text))
    changed: set[int] = set()
    for pieces in channels.values():
        joined = "".join([text for _, _, text in pieces])
        spans = redactor.spans(joined)
        if not spans:
            continue
        start = 0
        for number, path, text in pieces:  # each piece's place in the joined text: the lengths before it
            end = start + len(text)
            new = _rewritten(joined, start, end, spans)
            if new != text:
                _set(payloads[number], path, new)
                changed.add(number)
            start = end
    for number in changed:
        lines[number] = _DATA + " " + orjson.dumps(payloads[number]).decode()
    return "\n".join(lines) if changed else sse


def _strings(value: Any, path: tuple[Any, ...], found: list[tuple[tuple[Any, ...], str]] | None = None,
             ) -> list[tuple[tuple[Any, ...], str]]:
    """Every string in ``value`` with its path, depth first in order (appended to one list, ``found``; no call
    for a number or a null: the Responses API repeats its whole response object in several events)."""
    if found is None:
        found = []
    if isinstance(value, str):
        found.append((path, value))
        return found
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(item, str):
            found.append(((*path, key), item))
        elif isinstance(item, (dict, list)):
            _strings(item, (*path, key), found)
    return found


def _rewritten(joined: str, start: int, end: int, spans: list[tuple[int, int]]) -> str:
    """The piece ``joined[start:end]`` with the parts of secrets in it taken out, the replacement put where a
    secret starts."""
    out = []
    position = start
    for span_start, span_end in spans:
        if span_end <= start or span_start >= end:
            continue
        out.append(joined[position:max(span_start, start)])
        if span_start >= start:
            out.append(REPLACEMENT)
        position = min(span_end, end)
    out.append(joined[position:end])
    return "".join(out)


def _set(value: Any, path: tuple[Any, ...], new: str) -> None:
    for part in path[:-1]:
        value = value[part]
    value[path[-1]] = new
