"""A results file read entry by entry: memory flat in the number of traces.

``read_results_file`` holds the whole document as models (about 45 kB a trace of 16 tool calls: 4.8 GB at
100,000 traces). ``StoredResults`` reads the file once, front to back, one ``traces[]`` entry at a time, and
keeps only where each entry's bytes are; an entry is parsed again from those bytes when it is asked for
(a few recent ones are cached). Every entry is validated by the same ``TraceResult`` model as a whole-file
read, from the same bytes, so the models are the same; a file the scanner does not follow (not JSON, a
bad entry) is read whole by ``parse_results``, which names the file and the field as before.

A URL is copied to a local temporary file first (entries are read again by offset).

Example::

    with StoredResults.open("reports/big/results.json") as stored:
        print(stored.header.summary.traces)
        for position, entry in stored.entries():      # in file order, each parsed once
            ...
        entry = stored.entry(41)                       # parsed again from its bytes
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import shutil
import tempfile
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO

from pydantic import ValidationError

from tracekit.errors import ResultsError, StorageError, UnfollowedResults
from tracekit.results.model import Results, TraceResult, parse_results
from tracekit.storage import is_url, local, open_read

#: Bytes read from the file at a time while scanning.
CHUNK = 1 << 20
#: Entries kept parsed (a page of rows asks for each of its entries several times).
CACHED_ENTRIES = 256

_SPACE = re.compile(r"\s*")
_DECODER = json.JSONDecoder()


class StoredResults:
    """A results file whose entries are read on demand (see the module docstring)."""

    def __init__(self, handle: IO[bytes], name: str, header: Results, spans: array, temporary: str | None) -> None:
        self.header = header
        """The document without its entries (``traces`` empty): version, problems, summary."""
        self.name = name
        self._handle = handle
        self._spans = spans
        self._temporary = temporary
        self._cache: OrderedDict[int, TraceResult] = OrderedDict()

    @classmethod
    def open(cls, path: str | Path, on_entry: Callable[[int, TraceResult], None] | None = None) -> StoredResults:
        """Scan the results file at ``path`` (a path or a URL); ``on_entry(position, entry)`` is called for
        each entry as it is read. ``ResultsError`` naming the file (and the field) when it is not one."""
        name = str(path) if is_url(path) else str(Path(local(path)))
        temporary = None
        try:
            if is_url(path):
                temporary = _download(path)
            handle = open(temporary or local(path), "rb")  # noqa: SIM115 (closed by close())
        except OSError as exc:
            raise ResultsError(f"{name}: cannot read ({exc.strerror or exc})") from exc
        except StorageError as exc:
            raise ResultsError(str(exc)) from exc
        try:
            header, spans = _scan(handle, name, on_entry)
        except UnfollowedResults:
            handle.seek(0)
            document = parse_results(handle.read(), name)  # raises with the file's first bad field
            handle.close()
            _remove(temporary)
            return InMemoryResults(document, name, on_entry)
        except BaseException:
            handle.close()
            _remove(temporary)
            raise
        return cls(handle, name, header, spans, temporary)

    def __len__(self) -> int:
        return len(self._spans) // 2

    def entry(self, position: int) -> TraceResult:
        """The entry at ``position`` of ``traces[]``, parsed again from its bytes (recent ones cached)."""
        cached = self._cache.get(position)
        if cached is not None:
            self._cache.move_to_end(position)
            return cached
        self._handle.seek(self._spans[2 * position])
        entry = TraceResult.model_validate_json(self._handle.read(self._spans[2 * position + 1]))
        self._cache[position] = entry
        if len(self._cache) > CACHED_ENTRIES:
            self._cache.popitem(last=False)
        return entry

    def entries(self) -> Iterator[tuple[int, TraceResult]]:
        """Every entry with its position, in file order."""
        for position in range(len(self)):
            yield position, self.entry(position)

    def close(self) -> None:
        """Close the file (and remove the local copy of a URL)."""
        self._handle.close()
        _remove(self._temporary)

    def __enter__(self) -> StoredResults:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class InMemoryResults(StoredResults):
    """A document already in memory behind the same interface (a file the scanner did not follow)."""

    def __init__(self, document: Results, name: str = "results",
                 on_entry: Callable[[int, TraceResult], None] | None = None) -> None:  # fmt: skip
        self.header = document.model_copy(update={"traces": []})
        self.name = name
        self._traces = document.traces
        if on_entry is not None:
            for position, entry in enumerate(self._traces):
                on_entry(position, entry)

    def __len__(self) -> int:
        return len(self._traces)

    def entry(self, position: int) -> TraceResult:
        return self._traces[position]

    def close(self) -> None:
        pass


def _download(url: str | Path) -> str:
    """A local copy of the file at a URL, streamed in blocks."""
    handle, temporary = tempfile.mkstemp(prefix="tracekit-results-", suffix=".json")
    try:
        with os.fdopen(handle, "wb") as out, open_read(url) as source:
            shutil.copyfileobj(source, out, CHUNK)
    except BaseException:
        _remove(temporary)
        raise
    return temporary


def _remove(temporary: str | None) -> None:
    if temporary is not None:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


class _Reader:
    """The file as text, read in chunks, with the byte offset of the current position."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self._decode = codecs.getincrementaldecoder("utf-8")()
        self.text = ""
        self.at = 0
        """Position in ``text``."""
        self.offset = 0
        """Byte offset of ``text[at]`` in the file."""
        self.done = False

    def more(self, size: int = CHUNK) -> bool:
        """Read another chunk (the consumed text is dropped); False at the end of the file."""
        if self.done:
            return False
        data = self._handle.read(size)
        self.text = self.text[self.at :] + self._decode.decode(data, final=not data)
        self.at = 0
        self.done = not data
        return True

    def advance(self, end: int) -> str:
        """Move to ``end``; the text passed over."""
        passed = self.text[self.at : end]
        self.offset += len(passed.encode("utf-8"))
        self.at = end
        return passed

    def skip_space(self) -> str:
        """The next character after white space ('' at the end of the file)."""
        while True:
            end = _SPACE.match(self.text, self.at).end()  # type: ignore[union-attr]
            self.advance(end)
            if end < len(self.text):
                return self.text[end]
            if not self.more():
                return ""

    def expect(self, characters: str) -> str:
        found = self.skip_space()
        if not found or found not in characters:
            raise UnfollowedResults
        self.advance(self.at + 1)
        return found

    def value(self) -> str:
        """The JSON text of the next value (read until it is whole)."""
        self.skip_space()
        size = CHUNK
        while True:
            try:
                _, end = _DECODER.raw_decode(self.text, self.at)
            except json.JSONDecodeError:
                end = -1
            if end != -1 and (end < len(self.text) or self.done):
                return self.advance(end)
            if not self.more(size):
                raise UnfollowedResults
            size *= 2  # an entry larger than a chunk: read more at once, not a chunk per try


def _scan(handle: IO[bytes], name: str,
          on_entry: Callable[[int, TraceResult], None] | None) -> tuple[Results, array]:  # fmt: skip
    """The header (the document with ``traces`` empty) and each entry's (offset, length) in bytes."""
    reader = _Reader(handle)
    spans = array("q")
    header: list[str] = []
    seen_traces = False
    reader.expect("{")
    if reader.skip_space() != "}":
        while True:
            key = reader.value()
            reader.expect(":")
            if json.loads(key) == "traces":
                if seen_traces:
                    raise UnfollowedResults  # a key given twice: the whole-file read decides which one counts
                seen_traces = True
                header.append(f"{key}:[]")
                _scan_entries(reader, name, spans, on_entry)
            else:
                header.append(f"{key}:{reader.value()}")
            if reader.expect(",}") == "}":
                break
    if reader.skip_space() != "" or not seen_traces:
        raise UnfollowedResults
    try:
        return Results.model_validate_json("{" + ",".join(header) + "}"), spans
    except ValidationError:
        raise UnfollowedResults from None


def _scan_entries(reader: _Reader, name: str, spans: array,
                  on_entry: Callable[[int, TraceResult], None] | None) -> None:  # fmt: skip
    reader.expect("[")
    if reader.skip_space() == "]":
        reader.advance(reader.at + 1)
        return
    while True:
        reader.skip_space()
        offset = reader.offset
        data = reader.value().encode("utf-8")
        try:
            entry = TraceResult.model_validate_json(data)
        except ValidationError:
            raise UnfollowedResults from None
        spans.extend((offset, len(data)))
        if on_entry is not None:
            on_entry(len(spans) // 2 - 1, entry)
        if reader.expect(",]") == "]":
            return
