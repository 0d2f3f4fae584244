"""A progress bar on standard error: one redrawn line on a terminal, one line per finished job otherwise."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

BAR_WIDTH = 24


class Progress:
    """Counts finished jobs of a run and shows them."""

    def __init__(self, total: int, *, stream: TextIO | None = None, enabled: bool = True,
                 interactive: bool | None = None) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self._began = time.monotonic()
        self._lock = threading.Lock()

    def advance(self, label: str, ok: bool = True) -> None:
        """One more job is over (``ok`` False: it ended with an error)."""
        with self._lock:
            self.done += 1
            self.failed += 0 if ok else 1
            if not self.enabled:
                return
            mark = "ok" if ok else "error"
            if self.interactive:
                filled = BAR_WIDTH * self.done // max(self.total, 1)
                bar = "#" * filled + "." * (BAR_WIDTH - filled)
                line = f"\r[{bar}] {self.done}/{self.total} {self._elapsed()} {label} {mark}"
                self.stream.write(line[:160].ljust(100))
            else:
                self.stream.write(f"[{self.done}/{self.total}] {label} {mark}\n")
            self.stream.flush()

    def close(self) -> None:
        """End the redrawn line."""
        if self.enabled and self.interactive and self.done:
            self.stream.write("\n")
            self.stream.flush()

    def _elapsed(self) -> str:
        seconds = int(time.monotonic() - self._began)
        return f"{seconds // 60:02d}:{seconds % 60:02d}"
