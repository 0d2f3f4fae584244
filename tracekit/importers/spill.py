"""A temporary file of pickled objects, read back by position: how an importer keeps what it read on disk
instead of in memory until it needs it (the OpenTelemetry importers hold a small index entry per span
and the span's step here, until its session is built).

Example::

    with contextlib.closing(Spill()) as spill:
        where = spill.add({"big": "value"})
        spill.load(where)          # {"big": "value"}, a new object each time
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from typing import Any


class Spill:
    """Objects pickled one after the other into an anonymous temporary file (gone when closed, or when the
    process ends). Only for objects this process made: unpickling runs whatever the file says."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="tracekit-spill-")  # noqa: SIM115 - closed by close()
        self._end = 0

    def add(self, value: Any) -> int:
        """Append ``value``; returns its position, for ``load``."""
        if self._file.tell() != self._end:
            self._file.seek(self._end)
        where = self._end
        pickle.dump(value, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._end = self._file.tell()
        return where

    def load(self, where: int) -> Any:
        """The object added at ``where`` (a new copy of it)."""
        self._file.seek(where)
        return pickle.load(self._file)  # only what ``add`` wrote, in this process

    def __iter__(self) -> Iterator[Any]:
        """Every object added, in order."""
        self._file.seek(0)
        while self._file.tell() < self._end:
            yield pickle.load(self._file)  # only what ``add`` wrote, in this process

    def clear(self) -> None:
        """Forget every object added."""
        self._file.seek(0)
        self._file.truncate()
        self._end = 0

    def close(self) -> None:
        """Close and so delete the file."""
        self._file.close()
