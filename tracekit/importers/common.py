"""What every importer shares: reading JSON with errors that name the file, building records once with
``TraceBuilder``, binding to a case, and writing one trace file per transcript."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tracekit import __version__
from tracekit.cases.loader import collect_library
from tracekit.errors import ImportFormatError
from tracekit.trace import Content, Header, TraceBuilder, write_trace
from tracekit.trace.io import TRACE_SUFFIX


@dataclass
class ImportedTrace:
    """The records of one imported transcript, header first, ready to be written."""

    trace_id: str
    records: list[Any] = field(default_factory=list)

    @property
    def header(self) -> Header:
        header: Header = self.records[0]
        return header


def read_json(path: str | Path) -> Any:
    """The parsed JSON of ``path``; ``ImportFormatError`` naming the file when unreadable or not JSON."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ImportFormatError(f"{path}: not valid JSON: {exc}") from exc


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
        base = re.sub(r"[^\w.\-]+", "_", stem).strip("._") or "trace"
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids


def import_conversation_files(
    paths: list[str | Path],
    read_conversation: Callable[[str | Path], tuple[Content | None, list[dict[str, Any]]]],
    *,
    source: str,
    provider: str,
    case_id: str | None = None,
    cases_dir: str | Path | None = None,
) -> list[ImportedTrace]:
    """One trace per file, named after the file, bound to ``case_id`` when given; ``read_conversation``
    turns a file into its canonical ``(system, messages)``."""
    check_case_id(case_id, cases_dir)
    traces = []
    for path, trace_id in zip(paths, unique_ids(Path(p).stem for p in paths), strict=True):
        system, messages = read_conversation(path)
        header = new_header(trace_id, source, provider=provider, case_id=case_id, meta={"file": Path(path).name})
        traces.append(build_trace(header, messages, system))
    return traces


def write_traces(traces: Iterable[ImportedTrace], out_dir: str | Path) -> list[Path]:
    """Write each trace to ``out_dir/<trace_id>.jsonl`` (replacing an older file of that name)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [write_trace(out / f"{trace.trace_id}{TRACE_SUFFIX}", trace.records) for trace in traces]


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
