"""A tracing processor for the OpenAI Agents SDK that writes a canonical tracekit trace per SDK trace.

The SDK calls each registered ``TracingProcessor`` as traces and spans start and end
(openai/openai-agents-python, ``src/agents/tracing/processor_interface.py``). This processor keeps each
span's ``export()`` and, for ``response`` spans, what that export leaves out: the input items sent and
the whole response. When the trace ends it builds the trace with ``tracekit.importers.openai_agents``
(the same conversion as ``tracekit import openai-agents``) and writes ``OUT/<trace id>.jsonl`` through
the redactor, like every trace file. The SDK is not a dependency of tracekit: this module only needs the
objects the SDK hands it, and ``agents`` is imported nowhere.

Example::

    from agents import Agent, Runner, add_trace_processor
    from tracekit.integrations.openai_agents import TracekitProcessor

    add_trace_processor(TracekitProcessor("traces/"))   # or set_trace_processors([...]) to send nowhere else
    Runner.run_sync(Agent(name="weather", tools=[get_weather]), "北京天气？")
    # traces/trace_....jsonl, ready for `tracekit analyze traces/`
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import orjson

from tracekit.importers.openai_agents import agents_trace
from tracekit.trace import write_trace
from tracekit.trace.io import TRACE_SUFFIX

SOURCE = "openai-agents"


class TracekitProcessor:
    """Writes one trace file per Agents SDK trace into ``out_dir`` when the trace ends.

    A ``TracingProcessor`` by shape (the SDK's interface: ``on_trace_start``, ``on_trace_end``,
    ``on_span_start``, ``on_span_end``, ``shutdown``, ``force_flush``). Thread-safe: the SDK may end spans of
    concurrent runs from several threads. ``written`` lists the files written so far.
    """

    def __init__(self, out_dir: str | Path) -> None:
        self.out_dir = Path(out_dir)
        self.written: list[Path] = []
        self._lock = threading.Lock()
        self._traces: dict[str, dict[str, Any]] = {}
        self._spans: dict[str, list[dict[str, Any]]] = {}

    def on_trace_start(self, trace: Any) -> None:
        with self._lock:
            self._traces[trace.trace_id] = _exported(trace) or {"object": "trace", "id": trace.trace_id}
            self._spans.setdefault(trace.trace_id, [])

    def on_span_start(self, span: Any) -> None:
        """Nothing to do: a span is kept when it ends, with its result."""

    def on_span_end(self, span: Any) -> None:
        item = _exported(span)
        if item is None:
            return
        data = span.span_data
        if getattr(data, "type", None) == "response":
            response = getattr(data, "response", None)
            if response is not None:
                item["span_data"]["response"] = _plain(response)
            item["span_data"]["input"] = _plain(getattr(data, "input", None))
        with self._lock:
            self._spans.setdefault(span.trace_id, []).append(item)

    def on_trace_end(self, trace: Any) -> None:
        with self._lock:
            info = self._traces.pop(trace.trace_id, None) or {"object": "trace", "id": trace.trace_id}
            spans = self._spans.pop(trace.trace_id, [])
        built = agents_trace(info, spans, source=SOURCE)
        name = re.sub(r"[^\w.\-]+", "_", str(trace.trace_id)) or "trace"
        path = write_trace(self.out_dir / f"{name}{TRACE_SUFFIX}", built.records)
        with self._lock:
            self.written.append(path)

    def shutdown(self) -> None:
        """Traces still open are not written: they never ended."""

    def force_flush(self) -> None:
        """Every ended trace is already on disk."""


def _exported(item: Any) -> dict[str, Any] | None:
    exported = item.export()
    return _plain(exported) if isinstance(exported, dict) else None


def _plain(value: Any) -> Any:
    """A JSON-ready copy of SDK objects (pydantic models and typed dicts alike)."""
    return orjson.loads(orjson.dumps(value, default=_dump))


def _dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    return str(value)
