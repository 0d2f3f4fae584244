"""The tool side of a session as it passes: JSON-RPC messages in, trace records out, intercepts applied.

``ToolSideRecorder`` sees every message between the agent's MCP client and the tool server (the transports,
``tracekit.mcp.stdio`` and ``tracekit.mcp.http``, relay them) and writes, as each exchange completes:

- ``tool_call`` (``side: "tool"``) when a ``tools/call`` request passes, then ``mcp_exchange`` and
  ``tool_result`` (content, ``isError``, ``latency_ms``) when its answer passes;
- ``mcp_exchange`` for every other request once answered (``initialize`` with the server's name and version,
  ``tools/list`` with the schemas, resources, prompts, sampling, elicitation, ...) and for every notification
  (progress, cancellation, logging);
- ``intercept`` for each injection (a case's tool_intercept/tool_mock, a transport fault).

Every record goes through ``TraceWriter`` (one line, flushed, redacted), so a crash loses at most the last one.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracekit import __version__
from tracekit.mcp.faults import ToolFault, ToolPolicy, injected_result
from tracekit.mcp.jsonrpc import is_notification, is_request, is_response, result_response, tool_error_result
from tracekit.redact import Redactor
from tracekit.trace.canonical import parse_json_arguments
from tracekit.trace.io import TraceWriter
from tracekit.trace.models import Header, Intercept, McpExchange, ToolCall, ToolResult

#: The header's ``source`` of a tool-side trace.
SOURCE = "mcp"


@dataclass
class _Pending:
    method: str
    params: Any
    started: float
    wall: float
    direction: str
    session: str | None
    call_index: int | None = None
    tool: str | None = None
    arguments: Any = None
    replacement: Any = None
    fault: ToolFault | None = None


@dataclass(frozen=True)
class Decision:
    """What the transport does with a client message: send it on, and/or answer the client itself."""

    forward: bool = True
    reply: dict[str, Any] | None = None
    delay_s: float = 0.0
    cut: bool = False


FORWARD = Decision()


@dataclass
class ToolSideRecorder:
    """Records one tool-side trace (one agent session with one MCP server) and applies its policy.

    Example::

        recorder = ToolSideRecorder.open(out_dir, transport="stdio", command=["python", "server.py"])
        decision = recorder.from_client(message)      # before relaying a client message
        delay, message = recorder.from_server(reply)   # before relaying a server message
        recorder.close()
    """

    writer: TraceWriter
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    _pending: dict[tuple[str, str], _Pending] = field(default_factory=dict)
    _calls: int = 0

    @classmethod
    def open(
        cls,
        out_dir: Path,
        *,
        transport: str,
        command: list[str] | None = None,
        upstream: str | None = None,
        session: str | None = None,
        case_id: str | None = None,
        policy: ToolPolicy | None = None,
        redactor: Redactor | None = None,
        fsync: bool = False,
    ) -> ToolSideRecorder:
        """Start a trace file ``mcp-<id>.jsonl`` in ``out_dir`` and write its header."""
        trace_id = f"mcp-{uuid.uuid4().hex[:12]}"
        writer = TraceWriter(Path(out_dir) / f"{trace_id}.jsonl", fsync=fsync, redactor=redactor)
        meta: dict[str, Any] = {"side": "tool", "transport": transport}
        if command:
            meta["command"] = command
        if upstream:
            meta["upstream"] = upstream
        if case_id:
            meta["case"] = case_id  # not header.case_id: this trace holds no conversation to judge on its own
        writer.write(Header(trace_id=trace_id, created=datetime.now(UTC).isoformat(), tracekit=__version__,
                            source=SOURCE, session=session, meta=meta, t=time.time()))  # fmt: skip
        return cls(writer, policy or ToolPolicy())

    @property
    def path(self) -> Path:
        """The trace file being written."""
        return self.writer.path

    def from_client(self, message: dict[str, Any], session: str | None = None) -> Decision:
        """Note a message from the agent's client; for a ``tools/call``, decide on faults."""
        return self._incoming(message, "client", session)

    def from_server(self, message: dict[str, Any], session: str | None = None) -> tuple[float, dict[str, Any] | None]:
        """Note a message from the server; returns the delay before relaying it and the message to relay (the
        case's injected result in place of an intercepted answer; None: drop it, the client was answered)."""
        if is_response(message):
            return self._answered(message, "client", session)
        self._incoming(message, "server", session)
        return 0.0, message

    def from_client_response(self, message: dict[str, Any], session: str | None = None) -> None:
        """Note the client's answer to a server request (sampling, elicitation, roots)."""
        self._answered(message, "server", session)

    def _incoming(self, message: dict[str, Any], direction: str, session: str | None) -> Decision:
        if is_response(message):
            self._answered(message, "server", session)
            return FORWARD
        method = str(message.get("method"))
        params = message.get("params")
        if is_notification(message):
            self._write(McpExchange(method=method, direction=direction, params=params, session=session, t=time.time()))
            return FORWARD
        if not is_request(message):
            return FORWARD
        pending = _Pending(method, params, time.perf_counter(), time.time(), direction, session)
        self._pending[(direction, _key(message["id"]))] = pending
        if method != "tools/call" or direction != "client":
            return FORWARD
        tool, arguments = _tool_and_arguments(params)
        pending.call_index, pending.tool, pending.arguments = self._calls, tool, arguments
        self._calls += 1
        self._write(ToolCall(index=pending.call_index, id=str(message["id"]), name=tool, input=arguments,
                             message_index=pending.call_index, side="tool", t=pending.wall))  # fmt: skip
        pending.fault = self.policy.fault_for(tool)
        pending.replacement = self.policy.replacement_for(tool, arguments)
        fault = pending.fault
        if fault is None:
            return FORWARD
        if fault.kind == "latency":
            return Decision(delay_s=fault.milliseconds / 1000)
        if fault.kind == "cut":
            self._write_fault(pending, None)
            self._pending.pop(("client", _key(message["id"])), None)
            return Decision(forward=False, cut=True)
        if fault.kind == "timeout":
            text = f"tracekit: tool call timed out after {fault.milliseconds:g} ms (injected fault)"
        else:
            text = fault.value or "tracekit: tool call failed (injected fault)"
        reply = result_response(message["id"], tool_error_result(text))
        self._answered(reply, "client", session)
        delay = fault.milliseconds / 1000 if fault.kind == "timeout" else 0.0
        return Decision(forward=False, reply=reply, delay_s=delay)

    def _answered(
        self, message: dict[str, Any], direction: str, session: str | None
    ) -> tuple[float, dict[str, Any] | None]:
        pending = self._pending.pop((direction, _key(message.get("id"))), None)
        if pending is None:  # an answer to nothing we saw (or to a call a fault already answered): relay it
            return 0.0, message
        latency = round((time.perf_counter() - pending.started) * 1000, 3)
        delay = pending.fault.milliseconds / 1000 if pending.fault and pending.fault.kind == "latency" else 0.0
        if pending.fault is not None and pending.fault.kind in ("latency", "timeout"):
            latency = round(latency + pending.fault.milliseconds, 3)  # what the client waits, injected wait included
        original = None
        if pending.call_index is not None and pending.replacement is not None and "result" in message:
            original = message["result"]
            message = {**message, "result": injected_result(pending.replacement)}
            self._write(Intercept(mode=pending.replacement.mode, tool=pending.tool, call_index=pending.call_index,
                                  original=original, injected=message["result"]["content"],
                                  is_error=pending.replacement.is_error, t=time.time()))  # fmt: skip
        elif pending.fault is not None and pending.fault.kind != "latency" and original is None:
            self._write_fault(pending, message.get("result"))
        elif pending.fault is not None:
            self._write_fault(pending, None)
        self._write(McpExchange(method=pending.method, direction=pending.direction, id=message.get("id"),
                                params=pending.params, result=message.get("result"), error=message.get("error"),
                                latency_ms=latency, call_index=pending.call_index, session=session or pending.session,
                                fault=pending.fault.kind if pending.fault else None, original=original,
                                t=pending.wall))  # fmt: skip
        if pending.call_index is not None:
            self._write(_tool_result(pending, message, latency, injected=original is not None))
        return delay, message

    def _write_fault(self, pending: _Pending, injected: Any) -> None:
        assert pending.fault is not None
        self._write(Intercept(mode="fault", tool=pending.tool, call_index=pending.call_index,
                              injected=injected if injected is not None else pending.fault.describe(),
                              is_error=pending.fault.kind in ("timeout", "error") or None,
                              fault=pending.fault.describe(), t=time.time()))  # fmt: skip

    def _write(self, record: Any) -> None:
        self.writer.write(record)

    def close(self) -> None:
        """Write what is still unanswered (as unanswered exchanges) and close the file."""
        for pending in self._pending.values():
            unanswered = {"message": "no answer before the session ended"}
            self._write(McpExchange(method=pending.method, direction=pending.direction, params=pending.params,
                                    error=unanswered, call_index=pending.call_index, session=pending.session,
                                    t=pending.wall))  # fmt: skip
        self._pending.clear()
        self.writer.close()


def _key(request_id: Any) -> str:
    """A JSON-RPC id as a dict key (ids are strings or numbers; 1 and "1" are different ids)."""
    return f"{type(request_id).__name__}:{request_id}"


def _tool_and_arguments(params: Any) -> tuple[str, Any]:
    if not isinstance(params, dict):
        return "", {}
    arguments = params.get("arguments")
    if isinstance(arguments, str):  # not what the spec sends, but keep what came
        arguments, _ = parse_json_arguments(arguments)
    return str(params.get("name", "")), arguments if arguments is not None else {}


def _tool_result(pending: _Pending, message: dict[str, Any], latency: float, *, injected: bool) -> ToolResult:
    assert pending.call_index is not None
    result = message.get("result")
    if isinstance(result, dict):
        content = result.get("content")
        return ToolResult(call_index=pending.call_index, name=pending.tool,
                          content=content if isinstance(content, (list, str)) else [],
                          is_error=bool(result.get("isError")), message_index=pending.call_index, injected=injected,
                          side="tool", latency_ms=latency, t=time.time())  # fmt: skip
    error = message.get("error")
    error = error if isinstance(error, dict) else {}
    text = f"JSON-RPC error {error.get('code')}: {error.get('message')}"
    return ToolResult(call_index=pending.call_index, name=pending.tool, content=text, is_error=True,
                      message_index=pending.call_index, side="tool", latency_ms=latency, t=time.time())  # fmt: skip
