"""What analysis keeps of a trace file's records: everything it reads, and not the bodies it never reads.

The detectors, the call graph, the stats, the case checks, the diagnosis and both judges read the messages,
the calls, the results, the guard and MCP records, and of a model call its usage, its flags and the tools its
request declared (``diagnose.schema_rules``); none reads a model call's response, its SSE text or raw bodies,
the rest of its request (the whole conversation again, on every call), or an HTTP exchange's bodies. A
proxy's trace is mostly those bodies, so they are let go as each chunk of the file is decoded
(``read_mirrored``'s ``slim``): memory grows with the calls the analysis keeps, not with the lines it reads
(``benchmarks/results/large_inputs.md``).

A check an installed package adds (``expect.checks``) is handed the whole trace and may read anything: with
a case library whose cases name one, the records are kept whole. So is a file the mirrors cannot read (an
older format, a damaged line): the models read it, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from msgspec.structs import replace

from tracekit.analyze.entry import AnalyzeSettings
from tracekit.trace import Trace, load_trace

#: The fields let go, by record kind (their values become None).
UNREAD_FIELDS: dict[str, tuple[str, ...]] = {
    "model_call": ("response", "sse", "request_raw", "response_raw", "response_headers", "event_offsets_ms"),
    "http_exchange": ("request", "request_raw", "request_headers", "response", "response_raw", "response_headers"),
}


def load_for_analysis(path: str | Path, settings: AnalyzeSettings) -> Trace:
    """``load_trace(path, fast=True)``, each record slimmed (``Slimmer``) unless a check of an installed
    package may read it whole."""
    return load_trace(path, fast=True, slim=Slimmer() if may_slim(settings) else None)


class Slimmer:
    """Called on each record of one trace: the record without what analysis never reads. A model call's
    request is reduced to its declared tools, one object for every request that declares the same tools
    (an agent sends the same definitions on every call); the fields of ``UNREAD_FIELDS`` become None. Other
    records are returned as they are."""

    def __init__(self) -> None:
        self._tools: dict[bytes, Any] = {}

    def __call__(self, record: Any) -> Any:
        kind = record.kind
        unread = UNREAD_FIELDS.get(kind)
        if unread is None:
            return record
        changes: dict[str, Any] = {name: None for name in unread if getattr(record, name) is not None}
        request = record.request if kind == "model_call" else None
        if isinstance(request, dict):
            changes["request"] = {"tools": self._shared(request["tools"])} if "tools" in request else {}
        return replace(record, **changes) if changes else record

    def _shared(self, tools: Any) -> Any:
        try:
            key = orjson.dumps(tools)
        except TypeError:  # not JSON after all (a mirror holds only JSON): kept as it is
            return tools
        return self._tools.setdefault(key, tools)


def may_slim(settings: AnalyzeSettings) -> bool:
    """Whether the records may be slimmed: no case library, or one whose cases name no installed package's
    check (``CaseSet.names_checks``)."""
    return settings.library is None or not settings.library.names_checks
