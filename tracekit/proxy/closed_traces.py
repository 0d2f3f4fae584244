"""The trace files of expired sessions, kept until the recorder closes, on disk rather than in memory.

When the recorder closes it scrubs every file it wrote once more with every secret learnt since, those of
expired sessions included (a key an agent pasted before any request sent it as a header). Their paths have
to be kept until then, for the life of the process: held in memory they grew by ~55 bytes per session (1.1
MB per 20,000 sessions, round after round, issue 31 item 3). They go to an anonymous temporary file
instead (``tempfile.TemporaryFile``: no name on disk, gone when closed or when the process dies), one
NUL-terminated path after the other (a path cannot hold NUL). Should that file fail (a full disk), the
paths are kept in memory from then on: the scrub at close never misses one.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)

_END = b"\0"


class ClosedTraces:
    """Paths of closed trace files, appended one at a time and read back once (``paths``)."""

    def __init__(self) -> None:
        self.count = 0
        """How many paths were added."""
        self._file: IO[bytes] | None = None
        self._in_memory: list[bytes] = []
        self._spill = True

    def add(self, path: Path) -> None:
        """Keep ``path`` until ``paths`` reads them back."""
        encoded = os.fsencode(path) + _END
        self.count += 1
        if self._spill:
            try:
                if self._file is None:
                    self._file = tempfile.TemporaryFile(prefix="tracekit-closed-")  # noqa: SIM115 - closed by close()
                self._file.write(encoded)
                return
            except OSError as exc:
                log.error("tracekit: cannot keep closed trace paths in a temporary file (%s); kept in memory", exc)
                self._spill = False
        self._in_memory.append(encoded)

    def paths(self) -> Iterator[Path]:
        """Every path added, in order (the spilled ones read back a block at a time)."""
        if self._file is not None:
            try:
                yield from self._spilled(self._file)
            except OSError as exc:
                log.error("tracekit: cannot read the closed trace paths back (%s)", exc)
        for encoded in self._in_memory:
            yield Path(os.fsdecode(encoded[: -len(_END)]))

    @staticmethod
    def _spilled(file: IO[bytes]) -> Iterator[Path]:
        file.flush()
        file.seek(0)
        pending = b""
        while block := file.read(1 << 16):
            *whole, pending = (pending + block).split(_END)
            for encoded in whole:
                yield Path(os.fsdecode(encoded))
        file.seek(0, os.SEEK_END)

    def close(self) -> None:
        """Remove the temporary file (the paths are forgotten)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self._in_memory.clear()
