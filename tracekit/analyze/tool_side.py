"""What the tool servers really did in one trace: the ``tool_side`` block of the analyze JSON.

Read from the trace's ``tools/call`` exchanges (a tool-side trace, or a model-side trace the tool side was joined
to): how many calls reached a tool server, how many it answered with an error (``isError`` or a JSON-RPC error),
how long it took (``latency_ms``: request to answer at the server, so the agent's own overhead is not in it),
and which calls a fault or intercept at the tool layer changed.
"""

from __future__ import annotations

import statistics
from typing import Any

#: Where a ``server/discover`` result names its server (the mcp SDK's ``SERVER_INFO_META_KEY``).
SERVER_INFO_STAMP = "io.modelcontextprotocol/serverInfo"


def tool_side_stats(trace: Any) -> dict[str, Any] | None:
    """The ``tool_side`` block of a trace with recorded MCP traffic; None when it has none."""
    exchanges = [e for e in trace.kind("mcp_exchange") if e.method == "tools/call" and e.direction == "client"]
    if not exchanges:
        return None
    calls = []
    for exchange in exchanges:
        result = exchange.result if isinstance(exchange.result, dict) else {}
        params = exchange.params if isinstance(exchange.params, dict) else {}
        entry: dict[str, Any] = {
            "call": exchange.call_index,
            "name": str(params.get("name", "")),
            "is_error": bool(result.get("isError")) or exchange.error is not None,
            "latency_ms": exchange.latency_ms,
        }
        if exchange.fault is not None or exchange.original is not None:
            entry["injected"] = exchange.fault or "intercept"
        calls.append(entry)
    latencies = [call["latency_ms"] for call in calls if call["latency_ms"] is not None]
    servers = []
    for exchange in trace.kind("mcp_exchange"):
        result = exchange.result if isinstance(exchange.result, dict) else {}
        meta = result.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        # initialize names the server in serverInfo; server/discover (MCP 2026-07-28) in a _meta stamp.
        info = result.get("serverInfo") or meta.get(SERVER_INFO_STAMP)
        if exchange.method in ("initialize", "server/discover") and isinstance(info, dict) and info not in servers:
            servers.append({key: info[key] for key in ("name", "version") if key in info})
    return {
        "servers": servers,
        "tool_calls": len(calls),
        "tool_errors": sum(1 for call in calls if call["is_error"]),
        "latency_ms": {
            "total": round(sum(latencies), 3),
            "median": round(statistics.median(latencies), 3) if latencies else None,
            "max": max(latencies, default=None),
        },
        "calls": calls,
    }
