"""Answering an MCP client from tool-side recordings, without the server.

``ReplayIndex`` reads the ``mcp_exchange`` records of the tool-side traces in a folder. ``Responder`` answers:

- ``tools/call`` by tool name and canonical arguments (sorted keys), recorded answers of identical calls given
  first-in, first-out; the last one repeats once they are used up;
- with the progress notifications the server sent while answering it (stdio), under the live request's token;
- ``initialize`` with the recorded server (its ``protocolVersion`` as recorded);
- any other request (``tools/list``, ``resources/read``, ``prompts/get``, ...) by method and canonical params,
  then by method alone; ``ping`` with an empty result; notifications are taken and not answered.

A call no recording matches gets a JSON-RPC error naming the nearest recorded call (the same tool first, then
the most equal arguments) and the first difference, as the model replay does (``tracekit.trace.difference``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracekit.errors import TraceFormatError
from tracekit.mcp.jsonrpc import (
    METHOD_NOT_FOUND,
    SERVER_ERROR,
    canonical_arguments,
    error_response,
    is_request,
    result_response,
)
from tracekit.mcp.recorder import Decision, ToolSideRecorder
from tracekit.trace.canonical import canonical_json
from tracekit.trace.difference import first_difference
from tracekit.trace.io import trace_files
from tracekit.trace.view import load_trace

#: Request params that differ between runs without changing what is asked (progress tokens and other _meta).
_VOLATILE_PARAMS = frozenset({"_meta"})


@dataclass
class _Recorded:
    """One recorded answer: where it came from, what was asked, what came back."""

    where: str
    params: Any
    answer: dict[str, Any]
    """``{"result": ...}`` or ``{"error": ...}``."""
    progress: list[dict[str, Any]] = field(default_factory=list)
    """The params of the progress notifications the server sent while answering, in order."""


@dataclass
class ReplayIndex:
    """The recorded answers of a folder of tool-side traces, by method and params."""

    calls: dict[tuple[str, bytes], deque[_Recorded]] = field(default_factory=dict)
    last_call: dict[tuple[str, bytes], _Recorded] = field(default_factory=dict)
    by_params: dict[tuple[str, bytes], deque[_Recorded]] = field(default_factory=dict)
    by_method: dict[str, _Recorded] = field(default_factory=dict)
    all_calls: list[tuple[str, Any, _Recorded]] = field(default_factory=list)

    @classmethod
    def load(cls, paths: Iterable[str | Path]) -> ReplayIndex:
        """Index the ``mcp_exchange`` records of the traces under ``paths`` (tool-side traces, and model-side
        traces ``tracekit mcp join`` joined them to); ``TraceFormatError`` when none holds one."""
        index = cls()
        for path in trace_files(paths):
            trace = load_trace(path)
            progress: dict[str, list[dict[str, Any]]] = {}  # progress token -> notifications not yet claimed
            for number, record in enumerate(trace.records, start=2):
                if record.kind != "mcp_exchange":
                    continue
                if record.method == "notifications/progress" and record.direction == "server":
                    token = record.params.get("progressToken") if isinstance(record.params, dict) else None
                    progress.setdefault(_token_key(token), []).append(record.params)
                elif record.direction == "client" and record.id is not None:
                    notices = progress.pop(_token_key(_progress_token(record.params)), [])
                    index.add(record, f"{Path(str(path)).name}:{number}", notices)
        if not index.by_method:
            raise TraceFormatError(
                f"{', '.join(str(p) for p in paths)}: no recorded MCP exchange (record one with "
                "`tracekit mcp record --out DIR -- CMD ...`)"
            )
        return index

    def add(self, record: Any, where: str, progress: list[dict[str, Any]] | None = None) -> None:
        """Index one answered exchange and the progress the server sent for it (an unanswered one, with no result
        and no error, is left out)."""
        if record.result is None and record.error is None:
            return
        answer = {"error": record.error} if record.error is not None else {"result": record.result}
        if record.original is not None:
            answer = {"result": record.original}  # replay gives what the server said; a --case injects again
        recorded = _Recorded(where, record.params, answer, progress or [])
        self.by_method.setdefault(record.method, recorded)
        if record.method == "tools/call":
            name, arguments = _call_of(record.params)
            key = (name, canonical_arguments(arguments))
            self.calls.setdefault(key, deque()).append(recorded)
            self.last_call[key] = recorded
            self.all_calls.append((name, arguments, recorded))
        else:
            self.by_params.setdefault((record.method, _params_key(record.params)), deque()).append(recorded)

    def nearest_call(self, name: str, arguments: Any) -> tuple[str, Any, _Recorded] | None:
        """The recorded call most like ``name(arguments)``: same tool first, then most equal top-level arguments,
        the earliest winning a tie."""
        best: tuple[tuple[int, int], int, tuple[str, Any, _Recorded]] | None = None
        for order, (recorded_name, recorded_arguments, recorded) in enumerate(self.all_calls):
            score = (int(recorded_name == name), _equal_arguments(recorded_arguments, arguments))
            if best is None or score > best[0]:
                best = (score, order, (recorded_name, recorded_arguments, recorded))
        return None if best is None else best[2]


@dataclass
class Responder:
    """Answers one client session from a ``ReplayIndex`` (a recorder, when given, writes the replayed session).

    Example::

        responder = Responder(ReplayIndex.load(["recordings/"]))
        reply = responder.answer({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    """

    index: ReplayIndex
    recorder: ToolSideRecorder | None = None
    notices: list[dict[str, Any]] = field(default_factory=list)
    """Set by ``answer``: the notifications to send before its reply (the recorded progress of a call, under the
    live request's progress token; none when the client asked for no progress)."""

    def answer(self, message: dict[str, Any], session: str | None = None) -> tuple[Decision, dict[str, Any] | None]:
        """The decision on a client message (faults of ``--case``) and the reply to send (None for notifications
        and for a call a fault already answered or cut)."""
        decision = self.recorder.from_client(message, session) if self.recorder is not None else Decision()
        self.notices = []
        if not is_request(message) or not decision.forward:
            return decision, None
        reply = self._reply(message)
        if self.recorder is not None:
            delay, relayed = self.recorder.from_server(reply, session)
            return Decision(forward=False, delay_s=decision.delay_s + delay), relayed
        return decision, reply

    def _reply(self, message: dict[str, Any]) -> dict[str, Any]:
        request_id, method, params = message["id"], str(message["method"]), message.get("params")
        if method == "tools/call":
            return self._call(request_id, params)
        if method == "ping":
            return result_response(request_id, {})
        queue = self.index.by_params.get((method, _params_key(params)))
        recorded = queue.popleft() if queue and len(queue) > 1 else (queue[0] if queue else None)
        recorded = recorded or self.index.by_method.get(method)
        if recorded is None:
            return error_response(request_id, METHOD_NOT_FOUND,
                                  f"tracekit mcp replay: no {method} is recorded")  # fmt: skip
        return {"jsonrpc": "2.0", "id": request_id, **recorded.answer}

    def _call(self, request_id: Any, params: Any) -> dict[str, Any]:
        name, arguments = _call_of(params)
        key = (name, canonical_arguments(arguments))
        queue = self.index.calls.get(key)
        if queue:
            recorded = queue.popleft()
        elif key in self.index.last_call:
            recorded = self.index.last_call[key]  # more identical calls than recorded: the last answer again
        else:
            return error_response(request_id, SERVER_ERROR, self._miss(name, arguments))
        token = _progress_token(params)
        if token is not None:
            self.notices = [{"jsonrpc": "2.0", "method": "notifications/progress",
                             "params": {**notice, "progressToken": token}} for notice in recorded.progress]  # fmt: skip
        return {"jsonrpc": "2.0", "id": request_id, **recorded.answer}

    def _miss(self, name: str, arguments: Any) -> str:
        shown = canonical_json(arguments).decode()
        nearest = self.index.nearest_call(name, arguments)
        if nearest is None:
            return f"tracekit mcp replay: no recording matches tools/call {name} {shown}; no tools/call is recorded"
        recorded_name, recorded_arguments, recorded = nearest
        if recorded_name != name:
            difference = f"tool name: recorded {recorded_name!r} != request {name!r}"
        else:
            difference = first_difference(recorded_arguments, arguments)
        return (
            f"tracekit mcp replay: no recording matches tools/call {name} {shown}. Nearest recorded call: "
            f"{recorded_name} {canonical_json(recorded_arguments).decode()} ({recorded.where}); "
            f"first difference: {difference}"
        )


def _call_of(params: Any) -> tuple[str, Any]:
    if not isinstance(params, dict):
        return "", {}
    arguments = params.get("arguments")
    return str(params.get("name", "")), arguments if arguments is not None else {}


def _progress_token(params: Any) -> Any:
    """The progress token a request asked for (``params._meta.progressToken``), or None."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


def _token_key(token: Any) -> str:
    return f"{type(token).__name__}:{token}"


def _params_key(params: Any) -> bytes:
    if isinstance(params, dict):
        params = {key: value for key, value in params.items() if key not in _VOLATILE_PARAMS}
    return canonical_json(params)


def _equal_arguments(recorded: Any, live: Any) -> int:
    if not isinstance(recorded, dict) or not isinstance(live, dict):
        return int(canonical_json(recorded) == canonical_json(live))
    return sum(
        1 for key, value in live.items() if key in recorded and canonical_json(recorded[key]) == canonical_json(value)
    )
