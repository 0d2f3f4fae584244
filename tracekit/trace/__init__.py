"""The canonical trace: records, JSONL io, format migrations, canonical JSON and the loaded view.

The names are loaded on first use (``from tracekit.trace import ModelCall`` works as usual), so that a
module of the package that needs no record model, like ``io`` or ``canonical`` for ``tracekit replay``'s
start-up, is imported without pydantic and the record models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracekit.lazy import lazy_exports

if TYPE_CHECKING:
    from tracekit.trace.builder import TraceBuilder, message_fingerprint
    from tracekit.trace.canonical import canonical_json, content_hash, parse_json_arguments
    from tracekit.trace.io import ReadProblem, TraceWriter, iter_records, read_records, trace_files, write_trace
    from tracekit.trace.models import (
        FORMAT_VERSION,
        AgentRun,
        AssistantMessage,
        Content,
        ErrorRecord,
        Header,
        HttpExchange,
        Intercept,
        McpExchange,
        ModelCall,
        Record,
        SystemMessage,
        ToolCall,
        ToolResult,
        Usage,
        UserMessage,
    )
    from tracekit.trace.view import Call, Trace, TraceStats, content_text, load_trace

#: Each public name -> the module of the package that defines it.
_HOMES = {
    "builder": ["TraceBuilder", "message_fingerprint"],
    "canonical": ["canonical_json", "content_hash", "parse_json_arguments"],
    "io": ["ReadProblem", "TraceWriter", "iter_records", "read_records", "trace_files", "write_trace"],
    "models": ["FORMAT_VERSION", "AgentRun", "AssistantMessage", "Content", "ErrorRecord", "Header", "HttpExchange",
               "Intercept", "McpExchange", "ModelCall", "Record", "SystemMessage", "ToolCall", "ToolResult", "Usage",
               "UserMessage"],
    "view": ["Call", "Trace", "TraceStats", "content_text", "load_trace"],
}

__all__ = [
    "FORMAT_VERSION",
    "AgentRun",
    "AssistantMessage",
    "Call",
    "Content",
    "ErrorRecord",
    "Header",
    "HttpExchange",
    "Intercept",
    "McpExchange",
    "ModelCall",
    "ReadProblem",
    "Record",
    "SystemMessage",
    "ToolCall",
    "ToolResult",
    "Trace",
    "TraceBuilder",
    "TraceStats",
    "TraceWriter",
    "Usage",
    "UserMessage",
    "canonical_json",
    "content_hash",
    "content_text",
    "iter_records",
    "load_trace",
    "message_fingerprint",
    "parse_json_arguments",
    "read_records",
    "trace_files",
    "write_trace",
]

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
