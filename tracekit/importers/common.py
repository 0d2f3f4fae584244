"""What every importer shares: reading JSON with errors that name the file, building records once with
``TraceBuilder``, binding to a case, and writing one trace file per transcript.

Limits on hostile input (docs/importers.md, "Hostile input"): a JSON value nested deeper than
``MAX_NESTING`` levels is refused (tracekit's trace files cannot hold it); a trace file name is at most
``MAX_NAME_BYTES`` bytes (a longer id keeps its start and gets a hash of the whole id, so names stay
unique and stable); every file is written inside the output folder, atomically.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from tracekit import __version__
from tracekit.cases.loader import collect_library
from tracekit.errors import ImportFormatError, TracekitError
from tracekit.trace import Content, Header, TraceBuilder, write_trace
from tracekit.trace.io import TRACE_SUFFIX, numbered_lines

#: Nesting depth above which a JSON value is refused: orjson, which writes trace files, stops at 254 levels.
MAX_NESTING = 254
#: The longest trace file name written, in bytes (file systems allow 255; the rest is for ``.jsonl`` and
#: the temporary suffix of an atomic write).
MAX_NAME_BYTES = 200

#: The exceptions a malformed transcript can raise inside an importer's own code (a field of an unexpected
#: type, a value out of range, a validation error of a record): caught per file, per span, per trace, and
#: reported as a problem of that part, so that one bad part never stops the others.
DATA_ERRORS = (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError, OverflowError,
               TracekitError)  # fmt: skip


@dataclass
class ImportedTrace:
    """The records of one imported transcript, header first, ready to be written."""

    trace_id: str
    records: list[Any] = field(default_factory=list)
    origin: str = ""
    """Where the transcript was read (``file`` or ``file:position``), for messages about it."""

    @property
    def header(self) -> Header:
        header: Header = self.records[0]
        return header


def read_json(path: str | Path) -> Any:
    """The parsed JSON of ``path``; ``ImportFormatError`` naming the file when unreadable, not JSON or nested
    too deep."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ImportFormatError(f"{path}: not valid JSON: {exc}") from exc
    if too_deep(value):
        raise ImportFormatError(f"{path}: {TOO_DEEP}")
    return value


def json_values(path: Path, problems: list[str]) -> Iterator[tuple[str, Any]]:
    """The JSON values of one file with where each was read: the whole file (``path``), or one a line
    (``path:line``, JSONL); what cannot be read goes to ``problems`` and the rest is still read.

    A file whose first line is a JSON value of its own is JSONL (or that one value): it is read a chunk of
    lines at a time, never whole, so memory holds one value at a time whatever the file's size. Any other
    file is parsed whole (one document over many lines), and read line by line only when that fails."""
    lines = numbered_lines(path)
    try:
        first = next(lines, None)
        value = orjson.loads(first[1]) if first is not None else None
    except OSError as exc:
        problems.append(f"{path}: cannot read: {exc.strerror or exc}")
        return
    except orjson.JSONDecodeError:
        first = None
    if first is None:
        yield from _whole_or_lines(path, problems)
        return
    following = next(lines, None)
    if following is None:  # one value, the rest blank: the whole file's value
        yield from _checked(str(path), value, problems)
        return
    yield from _checked(f"{path}:{first[0]}", value, problems)
    for number, line, _torn in itertools.chain([following], lines):
        yield from _line_value(path, number, line, problems)


def _whole_or_lines(path: Path, problems: list[str]) -> Iterator[tuple[str, Any]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.append(f"{path}: cannot read: {exc.strerror or exc}")
        return
    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError as whole_error:
        lines = data.split(b"\n")
        if sum(1 for line in lines if line.strip()) <= 1:
            problems.append(f"{path}: not valid JSON: {whole_error}")
            return
    else:
        yield from _checked(str(path), whole, problems)
        return
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield from _line_value(path, number, line, problems)


def _line_value(path: Path, number: int, line: bytes, problems: list[str]) -> Iterator[tuple[str, Any]]:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        problems.append(f"{path}:{number}: not valid JSON: {exc}")
        return
    yield from _checked(f"{path}:{number}", value, problems)


def _checked(where: str, value: Any, problems: list[str]) -> Iterator[tuple[str, Any]]:
    if too_deep(value):
        problems.append(f"{where}: {TOO_DEEP}")
    else:
        yield where, value


TOO_DEEP = f"JSON nested deeper than {MAX_NESTING} levels, more than a trace file can hold; refused"


def too_deep(value: Any) -> bool:
    """Whether ``value`` is nested deeper than ``MAX_NESTING`` levels (checked by orjson, which refuses to
    write such a value, so the check costs one serialization in C and no Python recursion)."""
    if not isinstance(value, (dict, list)):
        return False
    try:
        orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError as exc:
        return "recursion" in str(exc).lower()
    return False


def describe(exc: BaseException) -> str:
    """What a caught ``DATA_ERRORS`` exception says, in one line, for a problem message."""
    if isinstance(exc, RecursionError):
        return "nested too deep to read"
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if type(exc).__name__ == "ValidationError":  # pydantic: name the field and what was wrong, not the class
        lines = [line.strip() for line in str(exc).splitlines()[1:3]]
        return "a field of the wrong type: " + ": ".join(lines) if lines else first
    return first or type(exc).__name__


def fail(path: str | Path, where: str, message: str) -> ImportFormatError:
    """An ``ImportFormatError`` for ``file: where: message`` (``where`` like ``messages[3].content``)."""
    return ImportFormatError(f"{path}: {where}: {message}" if where else f"{path}: {message}")


def type_name(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def build_trace(
    header: Header,
    messages: list[dict[str, Any]],
    system: Content | None = None,
) -> ImportedTrace:
    """Records of one canonical conversation: tool calls and results derived once, in order.

    Imported records carry no wall-clock time (``t``): the transcript does not say when each turn
    happened, and the import time would be a false answer.
    """
    builder = TraceBuilder(header)
    builder.add_conversation(messages, system)
    for record in builder.records[1:]:
        record.t = None
    return ImportedTrace(header.trace_id, builder.records)


def new_header(trace_id: str, source: str, **fields: Any) -> Header:
    """A header for an imported trace: creation time, tracekit version, ``source`` like 'import:tau-bench'."""
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return Header(trace_id=trace_id, source=source, created=created, tracekit=__version__, **fields)


def check_case_id(case_id: str | None, cases_dir: str | Path | None) -> None:
    """Raise ``ImportFormatError`` when ``case_id`` is not a case of the library in ``cases_dir``.

    Without ``cases_dir`` the id is taken as given.
    """
    if case_id is None or cases_dir is None:
        return
    library, _problems = collect_library(cases_dir)
    known = sorted(library.cases)
    if case_id not in known:
        close = [k for k in known if k.split("-")[:2] == case_id.split("-")[:2]] or known[:8]
        hint = f" (known: {', '.join(close)}{', ...' if len(known) > len(close) else ''})" if known else ""
        raise ImportFormatError(f"--case {case_id}: no such case in {cases_dir}{hint}")


def unique_ids(stems: Iterable[str]) -> list[str]:
    """Trace ids from file stems, made safe for file names and unique (``name``, ``name-2``, ...)."""
    seen: dict[str, int] = {}
    ids = []
    for stem in stems:
        base = safe_name(stem)
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids


def safe_name(trace_id: str) -> str:
    """A file name stem for ``trace_id``: word characters, ``.`` and ``-`` only (no path separator, no
    leading dot), at most ``MAX_NAME_BYTES`` bytes. A longer id keeps its start and ends with a hash of the
    whole id, so that the name is the same on every import and two ids never share one."""
    base = re.sub(r"[^\w.\-]+", "_", trace_id).strip("._") or "trace"
    if len(base.encode()) <= MAX_NAME_BYTES:
        return base
    digest = hashlib.sha256(trace_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    start = base.encode()[: MAX_NAME_BYTES - len(digest) - 1].decode(errors="ignore").rstrip("._-")
    return f"{start}-{digest}"


def import_conversation_files(
    paths: list[str | Path],
    read_conversation: Callable[[str | Path], tuple[Content | None, list[dict[str, Any]]]],
    *,
    source: str,
    provider: str,
    case_id: str | None = None,
    cases_dir: str | Path | None = None,
    problems: list[str] | None = None,
) -> list[ImportedTrace]:
    """One trace per file, named after the file, bound to ``case_id`` when given; ``read_conversation``
    turns a file into its canonical ``(system, messages)``.


    With a ``problems`` list, a file that cannot be read is named there and the others are still imported;
    without one, its ``ImportFormatError`` is raised."""
    check_case_id(case_id, cases_dir)
    traces = []
    for path, trace_id in zip(paths, unique_ids(Path(p).stem for p in paths), strict=True):
        try:
            system, messages = read_conversation(path)
            header = new_header(trace_id, source, provider=provider, case_id=case_id, meta={"file": Path(path).name})
            trace = build_trace(header, messages, system)
        except ImportFormatError as exc:
            if problems is None:
                raise
            problems.append(str(exc))
            continue
        except DATA_ERRORS as exc:
            if problems is None:
                raise ImportFormatError(f"{path}: {describe(exc)}") from exc
            problems.append(f"{path}: {describe(exc)}; skipped")
            continue
        trace.origin = str(path)
        traces.append(trace)
    return traces


class ConversationImporter(Protocol):
    """An importer of files that each hold one conversation (``conversation_importer`` makes one)."""

    def __call__(
        self, paths: list[str | Path], *, case_id: str | None = None, cases_dir: str | Path | None = None,
        problems: list[str] | None = None,
    ) -> list[ImportedTrace]: ...  # fmt: skip


def conversation_importer(
    read_conversation: Callable[[str | Path], tuple[Content | None, list[dict[str, Any]]]], *, source: str,
    provider: str,
) -> ConversationImporter:  # fmt: skip
    """The importer of files that each hold one conversation, read by ``read_conversation``: one trace per
    file, named after the file, bound to ``case_id`` when given. With a ``problems`` list a file that cannot
    be read is named there and the others are imported; without one it raises ``ImportFormatError``."""

    def import_files(
        paths: list[str | Path], *, case_id: str | None = None, cases_dir: str | Path | None = None,
        problems: list[str] | None = None,
    ) -> list[ImportedTrace]:  # fmt: skip
        return import_conversation_files(
            paths, read_conversation, source=source, provider=provider, case_id=case_id, cases_dir=cases_dir,
            problems=problems,
        )  # fmt: skip

    import_files.__doc__ = conversation_importer.__doc__
    return import_files


def write_traces(traces: Iterable[ImportedTrace], out_dir: str | Path, problems: list[str] | None = None) -> list[Path]:
    """Write each trace to ``out_dir/<name>.jsonl`` (``safe_name`` of its id; replacing an older file of that
    name), each atomically (a temporary file renamed into place).

    With a ``problems`` list, a trace that cannot be written is named there (with where it was read) and the
    others are still written; without one, ``ImportFormatError`` is raised."""
    out = Path(out_dir)
    written = []
    for trace in traces:
        out.mkdir(parents=True, exist_ok=True)  # here, so that nothing to write leaves no folder behind
        path = out / f"{safe_name(trace.trace_id)}{TRACE_SUFFIX}"
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            write_trace(temporary, trace.records)
            os.replace(temporary, path)
        except (OSError, *DATA_ERRORS) as exc:
            temporary.unlink(missing_ok=True)
            where = trace.origin or trace.trace_id
            message = f"{where}: trace {trace.trace_id[:80]} cannot be written: {describe(exc)}"
            if problems is None:
                raise ImportFormatError(message) from exc
            problems.append(message)
            continue
        written.append(path)
    return written


def input_files(paths: Iterable[str | Path], suffixes: tuple[str, ...], problems: list[str]) -> list[Path]:
    """Files named in ``paths``, and the files with one of ``suffixes`` in the folders named (recursively,
    sorted); a path that does not exist goes to ``problems`` instead."""
    found: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            held = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(suffixes))
            if not held:
                problems.append(f"{path}: no files found in this folder (the files read end in {', '.join(suffixes)})")
            found.extend(held)
        elif path.is_file():
            found.append(path)
        else:
            problems.append(f"{path}: no such file or folder")
    return found
