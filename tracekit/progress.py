"""The one progress display of tracekit (``run``, ``analyze``, ``import``), on standard error.

On a terminal it is one redrawn line, a bar with the count, the elapsed time and the last item;
otherwise (a log, a pipe, CI) one line per finished item, so that nothing is lost in a file::

    >>> import io
    >>> out = io.StringIO()
    >>> with Progress(2, label="importing", stream=out, interactive=False) as progress:
    ...     progress.advance("a.json")
    ...     progress.advance("b.json", ok=False)
    >>> print(out.getvalue(), end="")
    importing [1/2] a.json ok
    importing [2/2] b.json error

``total`` None (a stream whose length is not known yet, such as a listing still being read) shows a running
count instead of a bar. ``wrap`` counts the items of an iterable as they are consumed. Calls from several
threads are safe.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import TextIO, TypeVar

BAR_WIDTH = 24
#: A redrawn line is cut to this many characters (a long item name must not wrap the terminal line).
LINE_LIMIT = 160

ItemT = TypeVar("ItemT")


class Progress:
    """Counts the finished items of a long task and shows them.

    ``total`` items are expected (None: not known, a running count is shown); ``label`` starts every line;
    ``enabled`` False counts without showing;
    ``interactive`` (default: whether ``stream`` is a terminal) chooses the redrawn bar over one line per item.
    """

    def __init__(
        self,
        total: int | None,
        *,
        label: str = "",
        stream: TextIO | None = None,
        enabled: bool = True,
        interactive: bool | None = None,
    ) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.failed = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self._began = time.monotonic()
        self._lock = threading.Lock()

    def advance(self, item: str = "", ok: bool = True) -> None:
        """One more item is finished (``ok`` False: it ended with an error); ``item`` names it."""
        with self._lock:
            self.done += 1
            self.failed += 0 if ok else 1
            if not self.enabled:
                return
            prefix = f"{self.label} " if self.label else ""
            tail = " ".join(part for part in (item, "ok" if ok else "error") if part)
            count = f"{self.done}" if self.total is None else f"{self.done}/{self.total}"
            if self.interactive:
                if self.total is None:
                    line = f"\r{prefix}[{count}] {self._elapsed()} {tail}"
                else:
                    filled = BAR_WIDTH * min(self.done, self.total) // max(self.total, 1)
                    bar = "#" * filled + "." * (BAR_WIDTH - filled)
                    line = f"\r{prefix}[{bar}] {count} {self._elapsed()} {tail}"
                self.stream.write(line[:LINE_LIMIT].ljust(100))
            else:
                self.stream.write(f"{prefix}[{count}] {tail}\n")
            self.stream.flush()

    def wrap(self, items: Iterable[ItemT]) -> Iterator[ItemT]:
        """Yield each of ``items``, counting it as finished when the consumer asks for the next one."""
        for value in items:
            yield value
            self.advance()

    def close(self) -> None:
        """End the redrawn line."""
        if self.enabled and self.interactive and self.done:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _elapsed(self) -> str:
        seconds = int(time.monotonic() - self._began)
        return f"{seconds // 60:02d}:{seconds % 60:02d}"
