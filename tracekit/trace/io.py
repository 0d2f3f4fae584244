"""Reading and writing trace files (JSONL: a header line, then one record per line): every trace file
tracekit writes goes through ``TraceWriter``, every one it reads through ``read_records`` (the models)
or, for speed, ``tracekit.trace.mirror.read_mirrored`` (read-only mirrors, any projection of them).

The writer appends the lines of each call at once and flushes them, so a crash loses at most the records being
written; every line passes through the redactor first. The reader streams, a chunk of lines at a time (memory
holds the records, not the file's bytes): a torn or corrupt line is a ``ReadProblem`` naming the file and line,
and reading goes on; a file that is not a trace, or whose header cannot be used, is refused naming the file,
the line and the field.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError

from tracekit.errors import NotATraceError, TraceFormatError
from tracekit.redact import Redactor, default_redactor
from tracekit.storage import is_url, iter_files, kind, local, open_read, size_of
from tracekit.trace.foreign import not_a_record_message, not_a_trace_message, parse_document, unreadable_message
from tracekit.trace.line_problems import header_field_error, invalid_record, shown, unparsable_line
from tracekit.trace.migrations import header_format, upgrade_record
from tracekit.trace.models import FORMAT_VERSION, RECORD_KINDS, Header, Record

TRACE_SUFFIX = ".jsonl"

log = logging.getLogger(__name__)

_RECORD: TypeAdapter[Any] = TypeAdapter(Record)


@dataclass(frozen=True)
class ReadProblem:
    """A line of a trace file that could not be read; the rest of the file still was."""

    path: str
    line: int
    message: str
    torn: bool = False
    """The file's last line, cut short: the writer did not finish the file (a crash, a kill, a copy made
    while it was written), so the trace may lack what happened last."""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class TraceWriter:
    """Appends records to a trace file, one JSON line each, every line through the redactor, flushed (and
    fsynced when asked) after each call.

    ``write`` appends one record; ``write_many`` appends several with one system call (the proxy writes the
    records of one exchange so, and a file it keeps open between exchanges). Records are serialized by
    orjson from their fields (no pydantic JSON-mode walk over large bodies; the same bytes). No record can
    stop a file: text that is not UTF-8 is mended, and a record that still cannot be written is replaced by
    an ``error`` record saying so.

    Example::

        with TraceWriter(path) as writer:
            writer.write(Header(trace_id="t1"))
            writer.write(UserMessage(message_index=0, content="你好"))
    """

    def __init__(self, path: str | Path, *, fsync: bool = False, redactor: Redactor | None = None) -> None:
        self.path = Path(path)
        try:
            self._file: IO[bytes] = open(self.path, "ab")  # noqa: SIM115 - closed by close()
        except FileNotFoundError:  # the folder is made only when missing: a mkdir per file costs under load
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "ab")  # noqa: SIM115
        self._fsync = fsync
        self._redactor = redactor or default_redactor()

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        """Serialize, redact and append one record, then flush it to the OS."""
        self.write_many((record,))

    def write_many(self, records: Iterable[BaseModel | dict[str, Any]]) -> None:
        """Append ``records`` (one line each) with one write, flushed (and fsynced if asked)."""
        lines = []
        for record in records:
            try:
                lines.append(record_line(record))
            except Exception as exc:  # never let one record keep the others (and later ones) off the disk
                log.error("tracekit: could not write a record to %s: %s", self.path, exc)
                lines.append(_unwritable(record, exc))
        if not lines:
            return
        # One pass over the joined lines: the patterns never span a newline, so this is line by line.
        self._file.write(self._redactor.redact_bytes(b"\n".join(lines) + b"\n"))
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


def record_line(record: BaseModel | dict[str, Any]) -> bytes:
    """One record as a JSON line (no trailing newline), None fields left out: the bytes of
    ``record.model_dump(mode="json", exclude_none=True)``."""
    if isinstance(record, dict):
        return orjson.dumps(record)
    # The model's own fields, then its extra ones: what iterating the model gives, without pydantic's
    # Python-level iterator (a tenth of recording's cost under load).
    fields = {name: value for name, value in record.__dict__.items() if value is not None and name[0] != "_"}
    extra = getattr(record, "__pydantic_extra__", None)
    if extra:
        fields.update((name, value) for name, value in extra.items() if value is not None)
    try:
        return orjson.dumps(fields, default=_dump_model)
    except TypeError:  # a lone surrogate somewhere (text that was not UTF-8): mend it rather than lose the record
        return orjson.dumps(_mended(fields), default=_dump_model)


def _mended(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, BaseModel):
        return _mended(value.model_dump(mode="python", exclude_none=True))
    if isinstance(value, dict):
        return {_mended(key): _mended(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mended(item) for item in value]
    return value


def _unwritable(record: Any, exc: Exception) -> bytes:
    """The line written instead of a record that cannot be serialized."""
    kind = record.get("kind") if isinstance(record, dict) else getattr(record, "kind", type(record).__name__)
    moment = record.get("t") if isinstance(record, dict) else getattr(record, "t", None)
    message = f"tracekit could not write a {kind} record ({type(exc).__name__}: {exc})"
    return orjson.dumps({"t": moment, "kind": "error", "source": "proxy", "message": message})


def _dump_model(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    raise TypeError(f"cannot serialize {type(value).__name__} as JSON")


def write_trace(path: str | Path, records: Iterable[BaseModel], *, redactor: Redactor | None = None) -> Path:
    """Write a whole trace (header first) to a new file, replacing any file at ``path``."""
    path = Path(path)
    path.unlink(missing_ok=True)
    with TraceWriter(path, redactor=redactor) as writer:
        for record in records:
            writer.write(record)
    return path


def read_records(path: str | Path, problems: list[ReadProblem]) -> list[Any]:
    """All the validated records of one trace file, header first (made up from the file name when it is
    missing), for ``load_trace``; unreadable lines are appended to ``problems``.

    Raises ``NotATraceError`` for a file that is not a trace at all (empty, no line a record, another JSON
    document such as a tau-bench results file: the message names the import that reads it) and
    ``TraceFormatError`` for a header that cannot be used (a field of the wrong type, an unknown or newer
    format), naming the file, the line and the field.

    An intact file of the current format is validated a chunk of lines at a time straight from its bytes
    (pydantic-core parses the JSON itself: about twice as fast as orjson plus validating dicts); any other
    file, or one with a bad line, goes through ``iter_records``, which says what is wrong where.
    """
    validate_json = _RECORD.validator.validate_json

    def validate(chunk: bytes) -> list[Any] | None:
        try:
            # A line of only whitespace fails here and sends the file down the slow path, which skips it.
            return [validate_json(line) for line in chunk.split(b"\n") if line]
        except ValidationError:
            return None

    records = read_intact(path, validate)
    return records if records is not None else list(iter_records(path, problems, require_trace=True))


def read_intact(
    path: str | Path, decode: Callable[[bytes], list[Any] | None], keep: Callable[[Any], Any] | None = None
) -> list[Any] | None:
    """The records of an intact file of the current format, ``decode`` turning each chunk of whole lines
    (about ``CHUNK_BYTES``, ending with a newline) into its records, or into None when a line does not fit;
    ``keep``: what is kept of each record of a file of several chunks, as each chunk is decoded.

    None when the file does not end with a whole line or start with a header of the current format, or when
    ``decode`` gives up: the caller reads the file with ``iter_records`` then, which says what is wrong where.
    Memory holds the records and one chunk of the file, never the whole file's bytes.
    """
    with open_read(path) as handle:
        size = size_of(handle)
        if size <= CHUNK_BYTES:  # most traces: one read, one call of ``decode``
            data = handle.read()
            intact = data.endswith(b"\n") and _starts_with_current_header(data)
            return decode(data) if intact else None
        if not _ends_with_newline(handle, size):
            return None
        records: list[Any] = []
        for number, chunk in enumerate(_chunks(handle)):
            if number == 0 and not _starts_with_current_header(chunk):
                return None
            if not chunk:
                continue
            if not chunk.endswith(b"\n"):
                return None  # a torn line appended while we read: iter_records reports it
            decoded = decode(chunk)
            if decoded is None:
                return None
            records += decoded if keep is None else map(keep, decoded)
    return records


def iter_records(path: str | Path, problems: list[ReadProblem], *, require_trace: bool = False) -> Iterator[Any]:
    """Yield the validated records of one trace file, appending unreadable lines to ``problems``.

    The first readable record must be the header; if the header line itself is damaged (not JSON), or a
    record of another kind comes first, a header is made up from the file name (and reported) so that the
    rest of the trace is still read. Raises ``TraceFormatError`` for a header whose format is not a format
    number or is newer than this tracekit.

    ``require_trace`` (``load_trace``): also raise ``TraceFormatError`` for a header with a field of the
    wrong type, and ``NotATraceError`` for a file that is not a trace (no line a record, or the first JSON
    line not a record); without it such lines are reported as problems, as every other bad line.

    Lines of the current format are validated straight from their bytes (pydantic-core parses the JSON
    itself, which is about twice as fast as parsing with orjson and validating the dict); a line that
    fails is parsed again with orjson to say exactly what is wrong with it.
    """
    name = str(path)
    file_format: int | None = None
    header_line = 0
    first_problem = len(problems)
    validate_json = _RECORD.validator.validate_json
    for number, line, torn in numbered_lines(path):
        if file_format == FORMAT_VERSION:
            try:
                yield validate_json(line)
                continue
            except ValidationError:
                pass  # explained below, on the slow path
        try:
            raw = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            if require_trace and file_format is None and len(problems) == first_problem:
                _refuse_a_json_document(path, line)
            problems.append(ReadProblem(name, number, unparsable_line(line, exc, torn), torn=torn))
            continue
        if file_format is None:
            if require_trace and not _is_record(raw):
                _refuse_a_json_document(path, line)
                raise NotATraceError(not_a_record_message(name, number, raw))
            if not isinstance(raw, dict):
                problems.append(ReadProblem(name, number, f"expected a JSON object, got {type(raw).__name__}"))
                continue
            if raw.get("kind") == "header":
                file_format, header_line = _declared_format(raw, f"{name}:{number}"), number
            else:
                problems.append(ReadProblem(name, number, "no header record before this line; assumed one"))
                file_format = FORMAT_VERSION
                yield Header(trace_id=Path(name).stem)
        elif not isinstance(raw, dict):
            problems.append(ReadProblem(name, number, f"expected a JSON object, got {type(raw).__name__}"))
            continue
        if file_format != FORMAT_VERSION:
            raw = upgrade_record(raw, file_format, f"{name}:{number}")
        try:
            yield _RECORD.validate_python(raw)
        except ValidationError as exc:
            if require_trace and number == header_line:
                raise TraceFormatError(
                    f"{name}:{number}: invalid trace header: {header_field_error(exc)}; the first line of a trace is "
                    'its header (kind "header", format, trace_id: a string): fix that line or record the trace again'
                ) from None
            problems.append(ReadProblem(name, number, invalid_record(exc)))
    if require_trace and file_format is None:
        first = problems[first_problem] if len(problems) > first_problem else None
        raise NotATraceError(unreadable_message(name, f"line {first.line}: {first.message}" if first else None))


#: Files are read in pieces of about this size, each ending at a line end, so that memory holds one piece
#: of a file's bytes at a time whatever its size (a line longer than a piece is read whole).
CHUNK_BYTES = 4 * 1024 * 1024


def _chunks(handle: IO[bytes]) -> Iterator[bytes]:
    """The rest of the file in pieces of about ``CHUNK_BYTES`` that end with a newline, then whatever follows
    the last newline (empty, unless the last line is torn)."""
    pending: list[bytes] = []
    while block := handle.read(CHUNK_BYTES):
        end = block.rfind(b"\n") + 1
        if not end:
            pending.append(block)  # no line end yet: a long line
            continue
        pending.append(block[:end])
        yield b"".join(pending)
        pending = [block[end:]]
    yield b"".join(pending)


def numbered_lines(path: str | Path) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number, line, torn)`` for every non-blank line of a file, read a chunk at a time; ``torn`` marks
    a last line with no newline after it (the writer stopped mid-record)."""
    number = 0
    with open_read(path) as handle:
        for chunk in _chunks(handle):
            lines = chunk.split(b"\n")
            tail = lines.pop()  # after the chunk's last newline: only the final piece has one, a torn line
            for line in lines:
                number += 1
                if line.strip():
                    yield number, line, False
            if tail.strip():
                yield number + 1, tail, True


def _ends_with_newline(handle: IO[bytes], size: int) -> bool:
    if size == 0:
        return False
    handle.seek(size - 1)
    last = handle.read(1)
    handle.seek(0)
    return last == b"\n"


def _starts_with_current_header(chunk: bytes) -> bool:
    """Whether the first line is a header of the current format: a file the fast readers may try (a damaged
    line further on still sends it to ``iter_records``)."""
    end = chunk.find(b"\n")
    try:
        header = orjson.loads(chunk[:end] if end >= 0 else chunk)
    except orjson.JSONDecodeError:
        return False
    # The header's own ``format`` decides: a format-0 file must go through the migrations.
    return isinstance(header, dict) and header.get("kind") == "header" and header_format(header) == FORMAT_VERSION


def _is_record(raw: Any) -> bool:
    return isinstance(raw, dict) and raw.get("kind") in RECORD_KINDS


def _refuse_a_json_document(path: str | Path, first_line: bytes) -> None:
    """Raise ``NotATraceError`` saying what the file is when it is one JSON document (a tau-bench results file,
    a list of chat messages, ...) rather than a trace; return when it is not."""
    if first_line.lstrip()[:1] not in (b"[", b"{"):
        return
    whole, document = parse_document(path)
    if whole:
        raise NotATraceError(not_a_trace_message(path, document))


def _declared_format(raw_header: dict[str, Any], where: str) -> int:
    """The format the header declares; ``TraceFormatError`` when it is not a format number."""
    field = "format" if "format" in raw_header or "version" not in raw_header else "version"
    value = raw_header.get(field, 0)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return header_format(raw_header)
    raise TraceFormatError(
        f"{where}: invalid trace header: field {field}: expected a trace format number (0 to {FORMAT_VERSION}), "
        f"got {shown(value)}; fix that line or record the trace again"
    )


def trace_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand files and folders (recursively) into the sorted list of trace files they hold. A URL
    (``tracekit.storage``) is listed through its filesystem; its files come back as URL strings."""
    found: list[Path] = []
    for item in paths:
        item = local(item)
        if is_url(item):
            url = str(item)
            where = kind(url)
            if where == "directory":
                found.extend(iter_files(url, TRACE_SUFFIX))  # type: ignore[arg-type]  # URLs stay strings
            elif where == "file":
                found.append(url)  # type: ignore[arg-type]
            else:
                raise TraceFormatError(f"{url}: no such file or folder")
            continue
        path = Path(item)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob(f"*{TRACE_SUFFIX}") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise TraceFormatError(f"{path}: no such file or folder")
    return found
