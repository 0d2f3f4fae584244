"""Gemini's stream (``:streamGenerateContent?alt=sse``): assembled into one ``GenerateContentResponse`` and
rendered back.

Each event is ``data: {GenerateContentResponse}``: a chunk whose ``candidates[i].content.parts`` continue
the candidate's parts (text arrives in pieces, a ``functionCall`` whole), and whose last chunk carries
``finishReason`` (with ``usageMetadata``, which earlier chunks may also carry, the last one counting). There
is no ``[DONE]``: the stream ends after the chunk with a ``finishReason``. google-genai reads each ``data:``
line as one response (``_api_client.py`` ``_iter_response_stream``); a client joins the pieces itself.
The assembler joins consecutive text parts of the same kind (thought or not), keeps every other part as it
came, and lets a later chunk's other fields replace an earlier one's. An ``{"error": {...}}`` chunk is the
stream's error.
"""

from __future__ import annotations

import copy
from typing import Any

from tracekit.providers.base import AssemblerBase, event_object
from tracekit.providers.sse import ServerSentEvent, encode_json_event


class GeminiStreamAssembler(AssemblerBase):
    """Accumulates the chunks of one Gemini stream into the response they add up to."""

    def __init__(self) -> None:
        super().__init__()
        self._body: dict[str, Any] = {}
        self._candidates: dict[int, dict[str, Any]] = {}

    def feed(self, event: ServerSentEvent) -> None:
        """Take one chunk."""
        chunk = event_object(event)
        if chunk is None:
            return
        if isinstance(chunk.get("error"), dict):
            self._error = chunk
            return
        for key, value in chunk.items():
            if key != "candidates":
                self._body[key] = copy.deepcopy(value)
        candidates = chunk.get("candidates")
        for position, candidate in enumerate(candidates if isinstance(candidates, list) else []):
            if isinstance(candidate, dict):
                self._feed_candidate(candidate.get("index", position), candidate)

    def _feed_candidate(self, index: Any, candidate: dict[str, Any]) -> None:
        kept = self._candidates.setdefault(index if isinstance(index, int) else 0, {})
        for key, value in candidate.items():
            if key == "content" and isinstance(value, dict):
                content = kept.setdefault("content", {})
                for name, field in value.items():
                    if name == "parts" and isinstance(field, list):
                        join_parts(content.setdefault("parts", []), field)
                    else:
                        content[name] = copy.deepcopy(field)
            else:
                kept[key] = copy.deepcopy(value)
        if candidate.get("finishReason"):
            self._done = True

    def _snapshot_body(self) -> dict[str, Any]:
        body = copy.deepcopy(self._body)
        if self._candidates:
            body = {"candidates": [copy.deepcopy(self._candidates[i]) for i in sorted(self._candidates)], **body}
        return body


def join_parts(parts: list[dict[str, Any]], more: list[Any]) -> None:
    """Append the parts of a chunk to ``parts``: a text piece continues a text part of the same kind."""
    for part in more:
        if not isinstance(part, dict):
            continue
        last = parts[-1] if parts else None
        if (last is not None and _text_only(part) and _text_only(last)
                and bool(last.get("thought")) == bool(part.get("thought"))):  # fmt: skip
            last["text"] = last.get("text", "") + part.get("text", "")
            if part.get("thoughtSignature") is not None:
                last["thoughtSignature"] = part["thoughtSignature"]
            continue
        parts.append(copy.deepcopy(part))


def _text_only(part: dict[str, Any]) -> bool:
    return isinstance(part.get("text"), str) and set(part) <= {"text", "thought", "thoughtSignature"}


def render_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A response as the chunks that assemble back to it: one per part of the first candidate, the last one
    carrying the candidate's other fields (``finishReason``, ...) and every chunk the body's other fields."""
    candidates = body.get("candidates")
    rest = {key: value for key, value in body.items() if key != "candidates"}
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        return [copy.deepcopy(body)]
    candidate = candidates[0]
    content: dict[str, Any] = candidate["content"] if isinstance(candidate.get("content"), dict) else {}
    parts: list[Any] = content["parts"] if isinstance(content.get("parts"), list) else []
    others = {key: value for key, value in content.items() if key != "parts"}
    ending = {key: value for key, value in candidate.items() if key != "content"}
    chunks = []
    for position, part in enumerate(parts or [None]):
        piece: dict[str, Any] = {"content": {"parts": [part] if part is not None else [], **others}}
        if position == max(len(parts), 1) - 1:
            piece.update(ending)
        chunks.append({"candidates": [piece, *candidates[1:]] if position == 0 else [piece], **rest})
    return copy.deepcopy(chunks)


def render_stream(body: dict[str, Any]) -> bytes:
    """A response (or an error body) as the SSE bytes the API would have streamed."""
    if isinstance(body.get("error"), dict):
        return encode_json_event(body)
    return b"".join(encode_json_event(chunk) for chunk in render_chunks(body))
