"""A long text is stored once per trace.

Every request re-sends the whole conversation, and a response's text is also the assistant message the
trace records: written naively, a 10 MB answer lands in the trace three times (the model call's
``response``, the ``assistant_message``, the next model call's ``request``) and once more per later turn.
The conversation records (messages, tool calls and results) always hold their texts in full: analysis reads
them. A text of ``LONG_TEXT`` characters or more inside a model call's ``request`` or ``response`` that the
trace's conversation records already hold is written as ``tracekit:shared-text:sha256=<hex>`` instead, and
the call lists the hashes it uses in ``shared_texts``. ``resolve_shared_texts`` puts the texts back
(replay does, before answering or comparing requests).

Example::

    shared = SharedTexts()
    shared.remember(new_conversation_records)
    shared.share(call)              # call.request / call.response now name the long texts
    resolve_shared_texts(records)   # and back
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

#: Texts at least this long (characters) are stored once.
LONG_TEXT = 64 * 1024
MARK = "tracekit:shared-text:sha256="
_TEXT_FIELDS = ("content", "input")


def digest(text: str) -> str:
    """The SHA-256 of a text's UTF-8 bytes (hex)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def long_texts(value: Any) -> Iterator[str]:
    """Every string of ``LONG_TEXT`` characters or more inside ``value`` (dicts and lists walked)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) >= LONG_TEXT:
                yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _shape(text: str) -> tuple[int, str, str]:
    """A cheap key that equal texts share (length and both ends), checked before hashing."""
    return len(text), text[:64], text[-64:]


class SharedTexts:
    """The long texts one trace's conversation records hold in full (by shape, then hash)."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, str, str], str] = {}

    def remember(self, records: Iterable[Any]) -> None:
        """Note the long texts of conversation records about to be written."""
        for record in records:
            for name in _TEXT_FIELDS:
                for text in long_texts(getattr(record, name, None)):
                    self._known.setdefault(_shape(text), digest(text))

    def share(self, call: Any) -> None:
        """Replace the known long texts in ``call.request`` and ``call.response`` by their mark."""
        if not self._known:
            return
        used: set[str] = set()
        call.request = self._replaced(call.request, used)
        call.response = self._replaced(call.response, used)
        if used:
            call.shared_texts = sorted(used)

    def _replaced(self, value: Any, used: set[str]) -> Any:
        if isinstance(value, str):
            known = self._known.get(_shape(value)) if len(value) >= LONG_TEXT else None
            if known is not None and digest(value) == known:
                used.add(known)
                return MARK + known
            return value
        if isinstance(value, dict):
            changed = {key: self._replaced(item, used) for key, item in value.items()}
            return changed if any(changed[key] is not value[key] for key in value) else value
        if isinstance(value, list):
            items = [self._replaced(item, used) for item in value]
            return items if any(new is not old for new, old in zip(items, value, strict=True)) else value
        return value


def resolve_shared_texts(records: list[Any]) -> None:
    """Put the long texts back into the model calls of one trace's ``records`` that name them (in place)."""
    if not any(getattr(record, "shared_texts", None) for record in records):
        return
    texts: dict[str, str] = {}
    for record in records:
        for name in _TEXT_FIELDS:
            for text in long_texts(getattr(record, name, None)):
                texts.setdefault(digest(text), text)
    for record in records:
        if getattr(record, "shared_texts", None):
            record.request = _restored(record.request, texts)
            record.response = _restored(record.response, texts)


def _restored(value: Any, texts: dict[str, str]) -> Any:
    if isinstance(value, str):
        return texts.get(value[len(MARK) :], value) if value.startswith(MARK) else value
    if isinstance(value, dict):
        return {key: _restored(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [_restored(item, texts) for item in value]
    return value
