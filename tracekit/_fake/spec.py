"""Script files: a YAML (safe loading) or JSON list of reply specs, for ``tracekit fake-upstream``.

A file holds a list (shared by all routes) or a mapping with ``replies``, ``anthropic``, ``openai``,
``openai_responses`` and/or ``gemini`` lists. Each entry is a string (a text reply) or a mapping::

    - 你好                                   # text reply
    - text: 我查一下。                        # text, then tool calls (parallel when several)
      tool_use: [{name: get_weather, input: {city: 北京}}]
    - thinking: 先想一想                      # thinking block, then text
      text: 好的
    - content: [{type: redacted_thinking, data: abc}, {type: text, text: hi}]   # blocks in any order
    - error: {status: 529, should_retry: true, retry_after_ms: 20}
    - fault: reset                           # close the connection, no response
    - {text: 很长的回答, fault: {kind: cut, after_events: 3}, delay: {first_byte: 0.5, per_event: 0.01}}

Message options: ``stop_reason``, ``model``, ``usage`` (token counts), ``chunk_size``, ``headers``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

import orjson
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from tracekit._fake.replies import (
    Block,
    ConnectionReset,
    MessageReply,
    RedactedThinking,
    Reply,
    Text,
    Thinking,
    ToolUse,
    Usage,
    error_reply,
    text_reply,
)
from tracekit._fake.script import PROVIDERS, Script
from tracekit.errors import ScriptError
from tracekit.safe_yaml import safe_load_yaml


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolUseSpec(_Spec):
    name: str
    input: dict[str, Any] = {}
    id: str | None = None


class ThinkingSpec(_Spec):
    thinking: str
    signature: str | None = None


class BlockSpec(_Spec):
    type: Literal["text", "tool_use", "thinking", "redacted_thinking"]
    text: str | None = None
    name: str | None = None
    input: dict[str, Any] = {}
    id: str | None = None
    thinking: str | None = None
    signature: str | None = None
    data: str | None = None


class ErrorSpec(_Spec):
    status: int
    type: str | None = None
    message: str | None = None
    should_retry: bool | None = None
    retry_after_ms: int | None = None
    retry_after: float | None = None
    details: dict[str, Any] | None = None
    openai_type: str | None = None
    openai_code: str | None = None


class FaultSpec(_Spec):
    kind: Literal["reset", "cut", "error"]
    after_events: int = 0
    type: str = "overloaded_error"
    message: str = "Overloaded"
    status: int = 529


class DelaySpec(_Spec):
    first_byte: float = 0.0
    per_event: float = 0.0


class UsageSpec(_Spec):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


class ReplySpec(_Spec):
    """One scripted reply as written in a script file."""

    text: str | None = None
    thinking: str | ThinkingSpec | None = None
    tool_use: list[ToolUseSpec] | ToolUseSpec | None = None
    content: list[BlockSpec] | None = None
    stop_reason: str | None = None
    model: str | None = None
    usage: UsageSpec | None = None
    chunk_size: int = 8
    delay: DelaySpec | None = None
    headers: dict[str, str] = {}
    error: ErrorSpec | None = None
    fault: Literal["reset", "cut", "error"] | FaultSpec | None = None

    def to_reply(self) -> Reply:
        """The Reply this spec describes (ValueError when its fields do not go together)."""
        delay = self.delay or DelaySpec()
        fault = FaultSpec(kind=self.fault) if isinstance(self.fault, str) else self.fault
        has_content = any(v is not None for v in (self.text, self.thinking, self.tool_use, self.content))
        if self.error is not None:
            if has_content or fault is not None:
                raise ValueError("'error' cannot be combined with message content or 'fault'")
            error = error_reply(**self.error.model_dump(), headers=self.headers)
            return dataclasses.replace(error, first_byte_delay=delay.first_byte)
        if fault is not None and fault.kind == "reset":
            return ConnectionReset(first_byte_delay=delay.first_byte)
        if not has_content:
            raise ValueError(
                "a reply needs 'text', 'thinking', 'tool_use', 'content', 'error' or 'fault: reset'"
            )
        if self.content is not None and any(v is not None for v in (self.text, self.thinking, self.tool_use)):
            raise ValueError(
                "'content' lists every block; do not combine it with 'text', 'thinking', 'tool_use'"
            )
        usage = Usage(**self.usage.model_dump()) if self.usage else None
        reply = MessageReply(
            content=tuple(self._blocks()),
            stop_reason=self.stop_reason,
            model=self.model,
            usage=usage,
            chunk_size=self.chunk_size,
            first_byte_delay=delay.first_byte,
            event_delay=delay.per_event,
            headers=self.headers,
        )
        if fault is None:
            return reply
        if fault.kind == "cut":
            return reply.cut_after(fault.after_events)
        return reply.error_after(
            fault.after_events, type=fault.type, message=fault.message, status=fault.status
        )

    def _blocks(self) -> list[Block]:
        if self.content is not None:
            return [_block(spec) for spec in self.content]
        blocks: list[Block] = []
        if isinstance(self.thinking, str):
            blocks.append(Thinking(self.thinking))
        elif self.thinking is not None:
            blocks.append(Thinking(self.thinking.thinking, self.thinking.signature))
        if self.text is not None:
            blocks.append(Text(self.text))
        calls = [self.tool_use] if isinstance(self.tool_use, ToolUseSpec) else self.tool_use or []
        blocks.extend(ToolUse(call.name, call.input, call.id) for call in calls)
        return blocks


def _block(spec: BlockSpec) -> Block:
    required = {"text": "text", "tool_use": "name", "thinking": "thinking", "redacted_thinking": "data"}[
        spec.type
    ]
    if getattr(spec, required) is None:
        raise ValueError(f"a {spec.type} block needs '{required}'")
    if spec.type == "text":
        return Text(spec.text or "")
    if spec.type == "tool_use":
        return ToolUse(spec.name or "", spec.input, spec.id)
    if spec.type == "thinking":
        return Thinking(spec.thinking or "", spec.signature)
    return RedactedThinking(spec.data or "")


def load_script(path: str | Path) -> Script:
    """Read a YAML or JSON script file (YAML by safe loading; ``.json`` files by a JSON parser)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{path}: cannot read the script file: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ScriptError(f"{path}: not a text file (byte {exc.start} is not UTF-8); a script is YAML or JSON text "
                          "(docs/fake-upstream.md)") from exc
    lines: dict[tuple[str, int], int] = {}
    try:
        if path.suffix.lower() == ".json":
            data = orjson.loads(text)
        else:
            data = safe_load_yaml(text, str(path), ScriptError)
            lines = _entry_lines(text)
    except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
        raise ScriptError(
            f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {exc}"
        ) from exc
    return script_from_data(data, source=str(path), lines=lines)


def script_from_data(
    data: Any, *, source: str = "<script>", lines: dict[tuple[str, int], int] | None = None
) -> Script:
    """A Script from parsed script data (a list of reply specs, or a mapping of lists by provider)."""
    if isinstance(data, list):
        queues = {"replies": data}
    elif isinstance(data, dict):
        unknown = sorted(str(key) for key in data if key not in ("replies", *PROVIDERS))
        if unknown:
            expected = ", ".join(f"'{key}'" for key in ("replies", *PROVIDERS))
            raise ScriptError(f"{source}: unknown top-level keys {unknown}; expected {expected}")
        queues = data
    else:
        raise ScriptError(f"{source}: a script is a list of replies or a mapping of lists by provider")
    replies: dict[str, list[Reply]] = {}
    for queue, entries in queues.items():
        if not isinstance(entries, list):
            raise ScriptError(f"{source}: '{queue}' must be a list of replies")
        replies[queue] = [_entry(entry, queue, i, source, lines or {}) for i, entry in enumerate(entries)]
    return Script(
        replies.get("replies", []), anthropic=replies.get("anthropic"), openai=replies.get("openai"),
        openai_responses=replies.get("openai_responses"), gemini=replies.get("gemini"),
    )


def _entry(entry: Any, queue: str, index: int, source: str, lines: dict[tuple[str, int], int]) -> Reply:
    where = f"{source}:{lines[(queue, index)]}" if (queue, index) in lines else source
    where += f": {queue} entry {index}"
    if isinstance(entry, str):
        return text_reply(entry)
    try:
        return ReplySpec.model_validate(entry).to_reply()
    except ValidationError as exc:
        problems = "; ".join(
            f"field '{'.'.join(map(str, e['loc'])) or '(entry)'}': {e['msg']}" for e in exc.errors()
        )
        raise ScriptError(f"{where}: {problems}") from exc
    except ValueError as exc:
        raise ScriptError(f"{where}: {exc}") from exc


def _entry_lines(text: str) -> dict[tuple[str, int], int]:
    """The 1-based line of each list entry of a YAML script, by (queue, index)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    sequences: list[tuple[str, yaml.Node]] = []
    if isinstance(root, yaml.SequenceNode):
        sequences.append(("replies", root))
    elif isinstance(root, yaml.MappingNode):
        sequences.extend(
            (str(key.value), value) for key, value in root.value if isinstance(value, yaml.SequenceNode)
        )
    return {
        (queue, i): item.start_mark.line + 1 for queue, node in sequences for i, item in enumerate(node.value)
    }
