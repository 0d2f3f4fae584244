"""Turning conversations into trace records, once each, in order.

Every request an agent sends repeats the whole conversation so far. ``TraceBuilder`` remembers what it
has already recorded and emits records only for the messages that are new, so tool calls and results
are derived once, without duplicates. Importers feed it a whole transcript; the proxy feeds it each
request and each response.

Messages are canonical: ``{"role": "user" | "assistant", "content": str | [blocks]}`` with Anthropic-
shaped blocks (providers convert to this shape).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

import tracekit.trace.models as models
from tracekit.trace.canonical import canonical_json, content_hash
from tracekit.trace.mirror import MIRRORS
from tracekit.trace.models import Content, Header, ModelCall, ToolCall


def message_fingerprint(message: dict[str, Any]) -> str:
    """A hash of what a message means, ignoring fields that SDKs add or drop when they echo a reply
    back (``citations: null``, ``caller``, cache_control, ...).

    An assistant message that calls tools is identified by its calls (``tool_use`` ids and names) alone: some
    clients send such a turn back without its text or thinking blocks (crewai over Anthropic drops the leading
    text block, the ids unchanged), and it is still the same turn, in the same session, recorded once."""
    if not isinstance(message, dict):
        return content_hash([None, message])
    content = message.get("content")
    if isinstance(content, list):
        content = [_block_essence(block) for block in content]
        if message.get("role") == "assistant":
            calls = [block for block in content if isinstance(block, dict) and block.get("type") == "tool_use"]
            if calls:
                content = [{"type": "tool_use", "id": call.get("id"), "name": call.get("name")} for call in calls]
    return content_hash([message.get("role"), content])


def system_fingerprint(system: Any) -> str:
    """A hash of a system prompt's meaning (cache_control and other echoed fields ignored)."""
    if isinstance(system, list):
        return content_hash([_block_essence(block) for block in system])
    return content_hash(system)


#: The fields of a block that say what it means, by block type (other types: every field but cache_control).
_ESSENTIAL_KEYS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "tool_use": ("id", "name", "input"),
    "tool_result": ("tool_use_id", "content", "is_error"),
    "thinking": ("thinking",),
    "redacted_thinking": ("data",),
}


def _block_essence(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    keys = _ESSENTIAL_KEYS.get(str(kind))
    if keys is None:
        return {k: v for k, v in block.items() if k != "cache_control"}
    essence = {"type": kind, **{k: block.get(k) for k in keys}}
    if kind == "tool_result":
        essence["is_error"] = bool(block.get("is_error"))
        inner = block.get("content")
        if isinstance(inner, list):
            essence["content"] = [_block_essence(b) for b in inner]
    return essence


class TraceBuilder:
    """Accumulates the records of one trace from conversations and model calls.

    Example::

        builder = TraceBuilder(Header(trace_id="t1", source="import:openai"))
        builder.add_conversation(messages)
        records = builder.records  # header first

    ``read_only=True`` builds the messages, tool calls and results as their read-only mirrors
    (``tracekit.trace.mirror``): the same fields, made without pydantic's validation and copies, for a
    reader that only reads them (the live guard, on the request's path). They share the message dicts
    they were made from, and cannot be written with ``write_trace``.
    """

    def __init__(self, header: Header, *, read_only: bool = False) -> None:
        self.header = header
        self._made = READ_ONLY_RECORDS if read_only else models
        self.records: list[Any] = [header]
        self._fingerprints: list[str] = []
        self._system: Content | None = None
        self._systems: set[str] = set()
        """Fingerprints of the system prompts recorded: one already recorded is not recorded again."""
        self._tool_calls = 0
        self._model_calls = 0
        self._pending: list[ToolCall] = []

    @property
    def message_count(self) -> int:
        """Number of conversation messages recorded so far."""
        return len(self._fingerprints)

    @property
    def model_call_count(self) -> int:
        """Number of model calls recorded so far."""
        return self._model_calls

    def add_conversation(
        self,
        messages: list[dict[str, Any]],
        system: Content | None = None,
        *,
        injected: Iterable[str] = (),
        timestamp: float | None = None,
        fingerprints: list[str] | None = None,
    ) -> list[Any]:
        """Record the messages of ``messages`` that are not recorded yet; returns the new records.

        ``messages`` is the whole conversation as sent. Messages it shares with what is recorded are
        skipped; when it diverges (an agent rewrote its history), the rewritten tail is recorded again
        at its positions. ``injected`` names the tool_use ids whose results an intercept replaced.
        ``fingerprints`` are the messages' ``message_fingerprint`` when the caller has them already (the
        proxy derives them once per request for stitching, the recording and the live guard).
        """
        start = len(self.records)
        if system and system != self._system:
            self._system = system
            self._add_system(system, timestamp)
        if fingerprints is None or len(fingerprints) != len(messages):
            fingerprints = [message_fingerprint(m) for m in messages]
        recorded = self._fingerprints
        common = len(recorded)
        if fingerprints[:common] != recorded:  # (one list comparison when the conversation only grew)
            common = 0
            for old, new in zip(recorded, fingerprints, strict=False):
                if old != new:
                    break
                common += 1
            del recorded[common:]
        injected_ids = set(injected)
        for position in range(common, len(messages)):
            self._add_message(messages[position], position, injected_ids, timestamp, None)
            self._fingerprints.append(fingerprints[position])
        return self.records[start:]

    def add_model_call(
        self, call: ModelCall, reply: dict[str, Any] | None, *, fingerprint: str | None = None
    ) -> list[Any]:
        """Record one model call and, when it produced one, the assistant ``reply`` (canonical message).

        The call's ``index`` is assigned here. The reply becomes the next conversation message.
        ``fingerprint`` is the reply's ``message_fingerprint`` when the caller has it already.
        """
        start = len(self.records)
        call.index = self._model_calls
        self._model_calls += 1
        self.records.append(call)
        if reply is not None:
            position = len(self._fingerprints)
            self._add_message(reply, position, set(), call.t, call.index, call.stop_reason)
            self._fingerprints.append(fingerprint if fingerprint is not None else message_fingerprint(reply))
        return self.records[start:]

    def add_side_call(self, call: ModelCall) -> None:
        """Record a side call of the session (``ModelCall.side_call``: a title or summary request beside the
        conversation): its model call only, with the next ``index``; the conversation is left as it was."""
        call.index = self._model_calls
        call.side_call = True
        self._model_calls += 1
        self.records.append(call)

    def add(self, record: Any) -> None:
        """Append any other record (error, intercept, agent_run) as it happened."""
        self.records.append(record)

    def _add_message(
        self,
        message: dict[str, Any],
        position: int,
        injected: set[str],
        timestamp: float | None,
        model_call: int | None,
        stop_reason: str | None = None,
    ) -> None:
        if not isinstance(message, dict):
            message = {"role": "user", "content": _content(message)}
        role = message.get("role")
        content = _content(message.get("content"))
        t = timestamp if timestamp is not None else time.time()
        if role == "assistant":
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            self.records.append(
                self._made.AssistantMessage(
                    message_index=position, content=blocks, stop_reason=stop_reason, model_call=model_call, t=t
                )
            )
            for block in blocks:
                if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                    self._add_tool_call(block, position, model_call, t)
            return
        if role == "system":
            self._system = content
            self._add_system(content, t)
            return
        if not isinstance(content, list):
            self.records.append(self._made.UserMessage(message_index=position, content=content, t=t))
            return
        other = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._add_tool_result(block, position, injected, t)
            else:
                other.append(block)
        if other:
            self.records.append(self._made.UserMessage(message_index=position, content=other, t=t))

    def _add_system(self, system: Any, t: float | None) -> None:
        """Record a system prompt unless the session recorded the same one before (Claude Code sends its long
        prompt again after a system message of its own in mid-conversation: it is one prompt, recorded once)."""
        fingerprint = system_fingerprint(system)
        if fingerprint in self._systems:
            return
        self._systems.add(fingerprint)
        self.records.append(self._made.SystemMessage(content=_content(system), t=t))

    def _add_tool_call(self, block: dict[str, Any], position: int, model_call: int | None, t: float) -> None:
        raw_input = block.get("input", {})
        call = self._made.ToolCall(
            index=self._tool_calls,
            id=_text(block.get("id")),
            name=_text(block.get("name")) or "",
            input=raw_input,
            input_parse_error=bool(block.get("_input_parse_error", False)),
            message_index=position,
            model_call=model_call,
            t=t,
        )
        self._tool_calls += 1
        self._pending.append(call)
        self.records.append(call)

    def _add_tool_result(self, block: dict[str, Any], position: int, injected: set[str], t: float) -> None:
        tool_use_id = _text(block.get("tool_use_id"))
        call = next((c for c in self._pending if c.id == tool_use_id), None)
        if call is None and self._pending:
            call = self._pending[0]
        if call is not None:
            self._pending.remove(call)
        self.records.append(
            self._made.ToolResult(
                call_index=call.index if call else None,
                tool_use_id=tool_use_id,
                name=call.name if call else _text(block.get("name")),
                content=_content(block.get("content", "")),
                is_error=bool(block.get("is_error", False)),
                message_index=position,
                injected=tool_use_id in injected,
                t=t,
            )
        )


#: The mirrors by model name (``READ_ONLY_RECORDS.Header``, ...): what a read-only builder makes in place of
#: ``tracekit.trace.models``.
READ_ONLY_RECORDS: Any = SimpleNamespace(**{mirror.__name__: mirror for mirror in MIRRORS})


def _content(value: Any) -> Content:
    """Message content as a record holds it: a string, or a list of block dicts. Whatever else a client
    sent (a number, ``true``, a list holding a bare string) is kept as text, so that the exchange is
    still recorded."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list):
        return [block if isinstance(block, dict) else {"type": "text", "text": _text(block) or ""} for block in value]
    return _text(value) or ""


def _text(value: Any) -> str | None:
    """A string field as a string: None stays None, other JSON values become their JSON text."""
    if value is None or isinstance(value, str):
        return value
    return canonical_json(value).decode()
