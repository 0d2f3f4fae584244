"""A temporary file of pickled objects, read back by position: how an importer keeps what it read on disk
instead of in memory until it needs it (the OpenTelemetry importers hold a small index entry per span
and the span's step here, until its session is built).

What is written is masked: spans carry whatever the instrumented agent sent (prompts, tool arguments, a key
a tool was given), and nothing readable of it may reach the disk before the redactor has seen it. Each
object is XORed with a SHAKE-256 stream keyed by a random key held only in memory and the object's
position; the key is renewed when the file is emptied, so no stream is used twice.

Example::

    with contextlib.closing(Spill()) as spill:
        where = spill.add({"big": "value"})
        spill.load(where)          # {"big": "value"}, a new object each time
"""

from __future__ import annotations

import hashlib
import pickle
import secrets
import tempfile
from collections.abc import Iterator
from typing import Any

_LENGTH = 8
"""Bytes of the length written before each masked object."""


class Spill:
    """Objects pickled one after the other into an anonymous temporary file (gone when closed, or when the
    process ends), masked as the module docstring says. Only for objects this process made: unpickling runs
    whatever the file says, and only this process knows the key."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="tracekit-spill-")  # noqa: SIM115 - closed by close()
        self._end = 0
        self._key = secrets.token_bytes(32)

    def add(self, value: Any) -> int:
        """Append ``value``; returns its position, for ``load``."""
        if self._file.tell() != self._end:
            self._file.seek(self._end)
        where = self._end
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.write(len(data).to_bytes(_LENGTH, "little") + self._masked(data, where))
        self._end = self._file.tell()
        return where

    def load(self, where: int) -> Any:
        """The object added at ``where`` (a new copy of it)."""
        self._file.seek(where)
        return self._read(where)

    def __iter__(self) -> Iterator[Any]:
        """Every object added, in order."""
        self._file.seek(0)
        while (where := self._file.tell()) < self._end:
            yield self._read(where)

    def clear(self) -> None:
        """Forget every object added."""
        self._file.seek(0)
        self._file.truncate()
        self._end = 0
        self._key = secrets.token_bytes(32)

    def close(self) -> None:
        """Close and so delete the file."""
        self._file.close()

    def _read(self, where: int) -> Any:
        length = int.from_bytes(self._file.read(_LENGTH), "little")
        return pickle.loads(self._masked(self._file.read(length), where))  # only what ``add`` wrote

    def _masked(self, data: bytes, where: int) -> bytes:
        """``data`` XOR the key's stream at ``where`` (the same call masks and unmasks)."""
        stream = hashlib.shake_256(self._key + where.to_bytes(8, "little")).digest(len(data))
        return (int.from_bytes(data, "little") ^ int.from_bytes(stream, "little")).to_bytes(len(data), "little")
