"""Pieces shared by both wire protocols: the rendered response, deterministic ids, fake token counts.

Token counts are fake and documented as such: about one token per four characters (``ceil(chars / 4)``,
at least 1) of the request's ``system`` (or ``instructions``) + ``tools`` + ``messages`` serialized as
compact JSON for input, and of the generated text, thinking, tool names and tool input JSON for output.
They are deterministic, grow with the conversation, and are meant for tests, not for cost estimates.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from tracekit._fake.replies import (
    Block,
    MessageReply,
    RedactedThinking,
    StreamFault,
    Text,
    Thinking,
    ToolUse,
    Usage,
)
from tracekit._fake.request import FakeRequest

#: The ``created`` timestamp of every OpenAI response (2026-04-07T00:00:00Z), so that output is reproducible.
FAKE_CREATED = 1775520000


@dataclass
class WireResponse:
    """A rendered response: status, headers, and a JSON ``body`` or SSE ``events`` (one frame each)."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    events: list[bytes] | None = None
    #: For a cut JSON response, how many bytes of ``body`` are sent before the connection closes.
    cut_body_at: int | None = None
    #: Index in ``events`` of the frame that is sent only in part before the connection closes.
    cut_event_at: int | None = None
    #: The assistant message as its JSON response body would hold it (Anthropic), for the thread store.
    message: dict[str, Any] | None = None


class FakeIds:
    """Counter-based ids, one counter per prefix: ``msg_fake_0001``, ``toolu_fake_0001``, ..."""

    def __init__(self) -> None:
        self._counters: defaultdict[str, int] = defaultdict(int)

    def next(self, prefix: str) -> str:
        """The next id with ``prefix``."""
        self._counters[prefix] += 1
        return f"{prefix}{self._counters[prefix]:04d}"


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, as both providers send it (non-ASCII kept as is)."""
    return orjson.dumps(value)


def fake_tokens(text: str) -> int:
    """The fake token count of ``text``: ``ceil(len / 4)``, at least 1."""
    return max(1, math.ceil(len(text) / 4))


def tool_input_json(tool_use: ToolUse) -> str:
    """A tool's input as the providers stream it: ``json.dumps`` style (``", "`` and ``": "``), UTF-8 kept."""
    return json.dumps(dict(tool_use.input), ensure_ascii=False)


def input_tokens(request: FakeRequest) -> int:
    """The fake input token count of ``request``'s prompt (system, tools, full messages)."""
    body = request.body if isinstance(request.body, dict) else {}
    # The Responses API's system prompt is ``instructions``, Gemini's ``systemInstruction``.
    system = body.get("system") or body.get("instructions") or body.get("systemInstruction")
    prompt = {"system": system, "tools": body.get("tools"), "messages": list(request.messages)}
    return fake_tokens(dumps(prompt).decode())


def output_text(blocks: Sequence[Block]) -> str:
    """Everything the model "generated", for the output token count."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, Text):
            parts.append(block.text)
        elif isinstance(block, Thinking):
            parts.append(block.thinking)
        elif isinstance(block, RedactedThinking):
            parts.append(block.data)
        elif isinstance(block, ToolUse):
            parts.append(block.name + tool_input_json(block))
    return "".join(parts)


def reply_usage(reply: MessageReply, request: FakeRequest) -> dict[str, int]:
    """Input, output and cache token counts for ``reply``: the reply's ``Usage`` where given, else fake."""
    given = reply.usage or Usage()
    return {
        "input_tokens": _pick(given.input_tokens, input_tokens(request)),
        "cache_creation_input_tokens": _pick(given.cache_creation_input_tokens, 0),
        "cache_read_input_tokens": _pick(given.cache_read_input_tokens, 0),
        "output_tokens": _pick(given.output_tokens, fake_tokens(output_text(reply.content))),
    }


def thinking_tokens(reply: MessageReply) -> int:
    """The fake token count of the reply's thinking (OpenAI ``reasoning_tokens``)."""
    text = "".join(block.thinking for block in reply.content if isinstance(block, Thinking))
    return fake_tokens(text) if text else 0


def fake_signature(thinking: str) -> str:
    """A deterministic stand-in for a thinking block's signature (base64, like the real ones)."""
    digest = hashlib.sha256(thinking.encode()).hexdigest()[:32]
    return base64.b64encode(f"tracekit-fake-signature:{digest}".encode()).decode()


def thinking_signature(block: Thinking) -> str:
    """The signature sent with a thinking block: its own, or a fake one when it has none."""
    return block.signature if block.signature is not None else fake_signature(block.thinking)


def stream_pieces(block: Block, size: int) -> list[str]:
    """The pieces a streamed block's deltas carry: text and thinking in ``size`` characters, a tool's input
    JSON in fragments (``split_json``); none for redacted thinking (sent whole)."""
    if isinstance(block, Text):
        return split_text(block.text, size)
    if isinstance(block, Thinking):
        return split_text(block.thinking, size)
    if isinstance(block, ToolUse):
        return split_json(tool_input_json(block), size)
    return []


def split_text(text: str, size: int) -> list[str]:
    """``text`` in pieces of ``size`` characters (one empty piece for empty text)."""
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def split_json(text: str, size: int) -> list[str]:
    """Tool input JSON fragments: pieces of at most ``size`` characters, at least three when long enough."""
    piece = max(1, min(size, math.ceil(len(text) / 3)))
    return split_text(text, piece)


def _pick(given: int | None, computed: int) -> int:
    return computed if given is None else given


def apply_stream_fault(
    response: WireResponse, fault: StreamFault | None, error_frame: bytes | None
) -> WireResponse:
    """``response`` broken as ``fault`` says: events cut mid-frame, or ended by ``error_frame``; a JSON
    body cut in half. An error fault on a JSON response is the caller's to render as an HTTP error."""
    if fault is None:
        return response
    if response.events is None:
        if fault.kind == "cut":
            response.cut_body_at = len(response.body) // 2
        return response
    after = max(0, min(fault.after_events, len(response.events) - 1))
    if fault.kind == "cut":
        response.events = response.events[: after + 1]
        response.cut_event_at = after
    elif error_frame is not None:
        response.events = [*response.events[:after], error_frame]
    return response
