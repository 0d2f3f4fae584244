"""Reading and writing trace files (JSONL: a header line, then one record per line).

The writer appends one line per record and flushes it, so a crash loses at most the record being
written; every line passes through the redactor first. The reader streams: a torn or corrupt line is
reported as a ``ReadProblem`` naming the file and line, and reading goes on.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError

from tracekit.errors import TraceFormatError
from tracekit.redact import Redactor, default_redactor
from tracekit.trace.migrations import header_format, upgrade_record
from tracekit.trace.models import FORMAT_VERSION, Header, Record

TRACE_SUFFIX = ".jsonl"

_RECORD: TypeAdapter[Any] = TypeAdapter(Record)


@dataclass(frozen=True)
class ReadProblem:
    """A line of a trace file that could not be read; the rest of the file still was."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class TraceWriter:
    """Appends records to a trace file, one JSON line each, flushed (and optionally fsynced) per record.

    Example::

        with TraceWriter(path) as writer:
            writer.write(Header(trace_id="t1"))
            writer.write(UserMessage(message_index=0, content="你好"))
    """

    def __init__(self, path: str | Path, *, fsync: bool = False, redactor: Redactor | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] = open(self.path, "ab")  # noqa: SIM115 - closed by close()
        self._fsync = fsync
        self._redactor = redactor or default_redactor()

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        """Serialize, redact and append one record, then flush it to the OS."""
        value = record.model_dump(mode="json", exclude_none=True) if isinstance(record, BaseModel) else record
        line = self._redactor.redact_bytes(orjson.dumps(value)) + b"\n"
        self._file.write(line)
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file (records are already on disk)."""
        self._file.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def write_trace(path: str | Path, records: Iterable[BaseModel], *, redactor: Redactor | None = None) -> Path:
    """Write a whole trace (header first) to a new file, replacing any file at ``path``."""
    path = Path(path)
    if path.exists():
        path.unlink()
    with TraceWriter(path, redactor=redactor) as writer:
        for record in records:
            writer.write(record)
    return path


def read_records(path: str | Path, problems: list[ReadProblem]) -> list[Any]:
    """All the validated records of one trace file, as ``iter_records`` yields them.

    A whole, intact file of the current format is validated in one pass straight from its bytes
    (pydantic-core parses the JSON itself: about twice as fast as orjson plus validating dicts); any
    other file, or one with a bad line, goes through ``iter_records``, which says what is wrong where.
    """
    data = read_whole(path)
    if data is not None and is_intact_current(data):
        validate_json = _RECORD.validator.validate_json
        try:
            # A line of only whitespace fails here and sends the file down the slow path, which skips it.
            return [validate_json(line) for line in data.split(b"\n") if line]
        except ValidationError:
            pass
    return list(iter_records(path, problems))


def read_whole(path: str | Path) -> bytes | None:
    """The bytes of a trace file small enough to read in one call (``WHOLE_FILE_LIMIT``), else None."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > WHOLE_FILE_LIMIT:
            return None
        return handle.read()


def is_intact_current(data: bytes) -> bool:
    """Whether ``data`` ends with a whole line and starts with a header of the current format: a file the
    fast readers may try (a damaged line further on still sends it to ``iter_records``)."""
    if not data.endswith(b"\n"):
        return False
    try:
        header = orjson.loads(data[: data.find(b"\n")])
    except orjson.JSONDecodeError:
        return False
    # The header's own ``format`` decides: a format-0 file must go through the migrations.
    return isinstance(header, dict) and header.get("kind") == "header" and header_format(header) == FORMAT_VERSION


def iter_records(path: str | Path, problems: list[ReadProblem]) -> Iterator[Any]:
    """Yield the validated records of one trace file, appending unreadable lines to ``problems``.

    The first readable record must be the header; if the header line itself is damaged, a header is
    made up from the file name (and reported) so that the rest of the trace is still read. Raises
    ``TraceFormatError`` only for a file written by a newer tracekit.

    Lines of the current format are validated straight from their bytes (pydantic-core parses the JSON
    itself, which is about twice as fast as parsing with orjson and validating the dict); a line that
    fails is parsed again with orjson to say exactly what is wrong with it.
    """
    name = str(path)
    file_format: int | None = None
    validate_json = _RECORD.validator.validate_json
    for number, line, torn in _numbered_lines(path):
        if file_format == FORMAT_VERSION:
            try:
                yield validate_json(line)
                continue
            except ValidationError:
                pass  # explained below, on the slow path
        try:
            raw = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            what = "torn last line (the writer stopped mid-record)" if torn else f"not JSON ({exc})"
            problems.append(ReadProblem(name, number, what))
            continue
        if not isinstance(raw, dict):
            problems.append(ReadProblem(name, number, f"expected a JSON object, got {type(raw).__name__}"))
            continue
        if file_format is None:
            if raw.get("kind") == "header":
                file_format = header_format(raw)
            else:
                problems.append(ReadProblem(name, number, "no header record before this line; assumed one"))
                file_format = FORMAT_VERSION
                yield Header(trace_id=Path(name).stem)
        if file_format != FORMAT_VERSION:
            raw = upgrade_record(raw, file_format, f"{name}:{number}")
        try:
            yield _RECORD.validate_python(raw)
        except ValidationError as exc:
            problems.append(ReadProblem(name, number, _describe(exc)))


#: Files up to this size are read in one call (fast); larger ones line by line (flat memory).
WHOLE_FILE_LIMIT = 32 * 1024 * 1024


def _numbered_lines(path: str | Path) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number, line, torn)`` for every non-blank line of a file; ``torn`` marks a last line
    with no newline after it (the writer stopped mid-record)."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > WHOLE_FILE_LIMIT:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, line, not line.endswith(b"\n")
            return
        pieces = handle.read().split(b"\n")
    last = len(pieces) - 1  # the piece after the final newline: empty unless the last line is torn
    for index, line in enumerate(pieces):
        if line.strip():
            yield index + 1, line, index == last


def trace_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand files and folders (recursively) into the sorted list of trace files they hold."""
    found: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob(f"*{TRACE_SUFFIX}") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise TraceFormatError(f"{path}: no such file or folder")
    return found


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "record"
    return f"invalid record: {where}: {first['msg']}"
