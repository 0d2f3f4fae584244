"""The nearest-recording hashes of a recorded request, made from its JSON bytes without building the body.

A replay load indexes every recorded request for ``tracekit.proxy.nearest``: the ``value_hash`` (a hash of
the canonical JSON) of each top-level field and of each conversation item. Every request re-sends the
conversation so far, and the system prompt and tools of a recording repeat in every request, so most of
those values were met before. ``RawHashes`` splits a request into the JSON bytes of its fields (msgspec, in
C): a field equal to the one of the request before costs a comparison, a field value met before in the
load a dict look-up, and a conversation that extends the one before (the next request of a session) has
only its new items canonicalized. The result is the ``RequestHashes`` that ``request_hashes`` makes from
the parsed body, field for field.

The provider's ``request_items`` is given the body with its top-level lists (as empty lists that hold
their JSON) and strings as they are, every other value as its bytes: it only tells a list or a string
apart.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from tracekit.providers.base import Provider
from tracekit.proxy.keys import VOLATILE_FIELDS, VOLATILE_NESTED, normalized_request
from tracekit.proxy.nearest import ROOT as _ROOT
from tracekit.proxy.nearest import RequestHashes, items_field_of, prefix_chain, request_hashes, value_hash

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_ITEMS = msgspec.json.Decoder(list[msgspec.Raw]).decode
#: Top-level fields parsed whole, because ``normalized_request`` removes a volatile field inside them.
_PARSED = frozenset(outer for outer, _ in VOLATILE_NESTED)
_NONE = value_hash(None)


class _Bytes:
    """A top-level value the provider need not see: only its JSON bytes."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _List(list[Any]):
    """A top-level list, as its JSON bytes (left empty: the provider only asks whether a value is a list)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self.data = data


class RawHashes:
    """Request hashes from JSON bytes, for one load (drop it afterwards: it remembers the top-level field
    values it has seen; not the conversation items, far more numerous and seldom met in two sessions)."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, int], int] = {}
        """(length, hash) of a value's bytes -> its ``value_hash``: the same 64-bit identity ``value_hash``
        itself is, with the length as well."""
        self._last: dict[str, tuple[bytes, int]] = {}
        """Field name -> the bytes and ``value_hash`` of that field in the request before."""
        self._last_items: tuple[bytes, list[int]] = (b"[]", [_ROOT])
        """The bytes of the conversation items of the request before, and their ``prefix_chain``."""
        self._last_request: tuple[Provider, dict[str, msgspec.Raw], RequestHashes] | None = None
        """The provider, fields and hashes of the last request hashed field by field."""

    def value(self, data: bytes) -> int:
        """The ``value_hash`` of the JSON value ``data`` holds."""
        key = (len(data), hash(data))
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = value_hash(orjson.loads(data))
        return found

    def request(self, provider: Provider, data: bytes) -> RequestHashes | None:
        """``request_hashes(provider, orjson.loads(data))`` for a request's JSON bytes."""
        if data[:1] != b"{":
            return request_hashes(provider, orjson.loads(data))
        fields = _FIELDS(data)
        last = self._last_request
        if last is not None and last[0] is provider:
            hashes = self._extending(fields, last[1], last[2])
            if hashes is not None:
                return hashes
        hashes = self._hashed(provider, fields)
        self._last_request = (provider, fields, hashes)
        return hashes

    def _extending(
        self, fields: dict[str, msgspec.Raw], last: dict[str, msgspec.Raw], hashes: RequestHashes
    ) -> RequestHashes | None:
        """The hashes of a request whose fields are those of the request before (``last``, ``hashes``) but
        for its conversation items, which are still a list (the next request of a session), else None."""
        items_field = hashes.items_field
        if items_field is None or fields.keys() != last.keys():
            return None
        for name, value in fields.items():
            if name != items_field and name not in VOLATILE_FIELDS and value != last[name]:
                return None
        items = bytes(fields[items_field])
        if items[:1] != b"[":
            return None
        return RequestHashes(hashes.model, items_field, hashes.others, self._chain(items))

    def _hashed(self, provider: Provider, fields: dict[str, msgspec.Raw]) -> RequestHashes:
        """The hashes of a request, field by field (``fields``: the JSON of each top-level field)."""
        body: dict[str, Any] = {}
        texts: dict[str, bytes] = {}
        for name, raw in fields.items():
            value = bytes(raw)
            first = value[:1]
            if first == b"[":
                body[name] = _List(value)
            elif first == b'"':
                body[name], texts[name] = orjson.loads(value), value
            elif name in _PARSED:
                body[name] = orjson.loads(value)
            else:
                body[name] = _Bytes(value)
        recorded = normalized_request(body)
        items = provider.request_items(recorded)
        items_field = items_field_of(recorded, items)

        def hash_of(name: str, value: Any) -> int:
            if isinstance(value, (_Bytes, _List)):
                return self._field(name, value.data)
            if name in texts and value is body[name]:
                return self._field(name, texts[name])
            return value_hash(value)  # a field normalized (metadata without its user id)

        others = frozenset((name, hash_of(name, value)) for name, value in recorded.items() if name != items_field)
        if isinstance(items, _List):
            chain = self._chain(items.data)
        else:  # a list the provider made (a string input is one user message), or none
            chain = prefix_chain([value_hash(item) for item in items or ()])
        model = hash_of("model", recorded["model"]) if "model" in recorded else _NONE
        return RequestHashes(model, items_field, others, chain)

    def _field(self, name: str, data: bytes) -> int:
        last = self._last.get(name)
        if last is not None and last[0] == data:
            return last[1]
        found = self.value(data)
        self._last[name] = (data, found)
        return found

    def _chain(self, data: bytes) -> list[int]:
        """The ``prefix_chain`` of the items of the JSON array ``data``."""
        previous, chain = self._last_items
        if data == previous:
            return chain
        end = len(previous) - 1  # up to the previous array's closing bracket
        if len(chain) > 1 and data[end : end + 1] == b"," and data.startswith(previous[:end]):
            # The same items first, byte for byte, each whole (a comma follows the last): only the rest is new.
            chain = chain.copy()
            rest = b"[" + data[end + 1 :]
        else:
            chain = [_ROOT]
            rest = data
        for item in _ITEMS(rest):  # bytes first: orjson reads a msgspec.Raw several times slower
            chain.append(hash((chain[-1], value_hash(orjson.loads(bytes(item))))))
        self._last_items = (data, chain)
        return chain


__all__ = ["RawHashes"]
