"""The Gemini API (``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent?alt=sse``)
to and from canonical form: what google-genai, google-adk and the Gemini CLI speak.

The format (Gemini API reference, ai.google.dev/api/generate-content; google-genai ``models.py``, which
builds ``{model}:generateContent`` and ``{model}:streamGenerateContent?alt=sse`` under ``/v1beta/models/``):

- the path names the model and whether to stream (``for_route`` binds them); the body has neither;
- request: ``contents`` (``{"role": "user" | "model", "parts": [...]}``; consecutive Contents of one role
  are one canonical message: google-genai's chat sends a streamed reply back as one Content per chunk),
  ``systemInstruction`` (a ``Content``), ``tools[].functionDeclarations``, ``generationConfig``,
  ``toolConfig``; parts as ``gemini_parts`` says (``functionCall`` -> tool_use, ``functionResponse`` -> tool_result);
- response: ``candidates[0].content`` -> the assistant message; ``finishReason`` (``STOP``, ``MAX_TOKENS``,
  ``SAFETY``, ...), ``usageMetadata`` (``promptTokenCount``, ``candidatesTokenCount``, ``thoughtsTokenCount``,
  ``cachedContentTokenCount``), ``modelVersion``, ``responseId``; everything else stays in ``meta``;
- errors: ``{"error": {"code": 400, "message": "...", "status": "INVALID_ARGUMENT"}}``.

``:countTokens`` answers no model call: the proxy records and replays it as another route. The key travels
as ``x-goog-api-key`` or ``?key=``; ``tracekit.redact`` knows both.
"""

from __future__ import annotations

import copy
import re
from typing import Any
from urllib.parse import unquote

from typing_extensions import Unpack

from tracekit.providers.base import Overrides, Provider, StreamAssembler, ToolResultRef, overridden
from tracekit.providers.defaults import ProviderBase
from tracekit.providers.gemini_parts import answered_response, block_parts, content_blocks
from tracekit.providers.gemini_stream import GeminiStreamAssembler, render_stream
from tracekit.providers.sse import encode_json_event
from tracekit.trace.canonical import content_hash
from tracekit.trace.models import Content, Usage

#: ``/{version}/models/{model}:generateContent`` or ``:streamGenerateContent`` (``v1beta``; ``v1``, which
#: google-genai uses under a custom ``base_url``).
_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$")
_HINTS = "_gemini"

#: ``finishReason`` values (google-genai ``types.FinishReason``) in the Messages API's stop-reason terms;
#: ``STOP`` with a function call is ``tool_use`` (Gemini says ``STOP`` when it calls a function).
_STOP_REASONS = {"STOP": "end_turn", "MAX_TOKENS": "max_tokens", "SAFETY": "refusal", "RECITATION": "refusal",
                 "BLOCKLIST": "refusal", "PROHIBITED_CONTENT": "refusal", "SPII": "refusal",
                 "IMAGE_SAFETY": "refusal", "IMAGE_PROHIBITED_CONTENT": "refusal"}  # fmt: skip
#: HTTP status -> the error ``status`` the API sends with it (google.rpc.Code names).
_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             408: "DEADLINE_EXCEEDED", 409: "ABORTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED",
             499: "CANCELLED", 500: "INTERNAL", 501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE",
             504: "DEADLINE_EXCEEDED", 529: "UNAVAILABLE"}  # fmt: skip


class Gemini(ProviderBase):
    """The Gemini API's ``generateContent`` (see the module docstring)."""

    NAME = "gemini"
    ROUTE = "/{version}/models/{model}:{method:generateContent|streamGenerateContent}"
    CLIENT_HEADERS = ("x-goog-api-key", "x-goog-api-client")

    _route_model: str | None = None
    _route_stream: bool = False

    @property
    def API_PATHS(self) -> tuple[str, ...]:
        """The Gemini API's paths (its own errors there take the Gemini shape)."""
        return ("/v1beta/", "/v1/models/", "/upload/v1beta/")

    def for_route(self, path: str) -> Provider | None:
        """A copy bound to the path's model and method (``streamGenerateContent`` streams)."""
        found = _PATH.search(path.split("?", 1)[0])
        if found is None:
            return None
        bound = copy.copy(self)
        bound._route_model = unquote(found["model"])
        bound._route_stream = found["method"] == "streamGenerateContent"
        return bound

    # -- request -----------------------------------------------------------------------------------------

    def request_conversation(self, body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
        """``systemInstruction`` and ``contents`` as ``(system, messages)`` (role ``model`` -> assistant)."""
        instruction = body.get("systemInstruction")
        system: Content | None = instruction if isinstance(instruction, str) else None
        if isinstance(instruction, dict):
            blocks = content_blocks(instruction.get("parts"))
            one_text = len(blocks) == 1 and blocks[0]["type"] == "text"
            system = blocks[0]["text"] if one_text else (blocks or None)
        turns: list[tuple[str, list[Any]]] = []  # consecutive Contents of one role are one turn
        for item in self.request_items(body) or []:
            if isinstance(item, dict):
                role = "assistant" if item.get("role") == "model" else "user"
                parts: list[Any] = item["parts"] if isinstance(item.get("parts"), list) else []
                if turns and turns[-1][0] == role:
                    turns[-1][1].extend(parts)
                else:
                    turns.append((role, list(parts)))
        return system, [{"role": role, "content": content_blocks(parts)} for role, parts in turns]

    def request_model(self, body: dict[str, Any]) -> str | None:
        """The model the path names (the body has none)."""
        return self._route_model

    def request_stream(self, body: dict[str, Any]) -> bool:
        """Whether the path is ``streamGenerateContent`` (the body does not say)."""
        return self._route_stream

    def request_items(self, body: dict[str, Any]) -> list[Any] | None:
        """The body's ``contents``."""
        contents = body.get("contents")
        return contents if isinstance(contents, list) else None

    def with_request_items(self, body: dict[str, Any], items: list[Any]) -> dict[str, Any]:
        """The body with other ``contents``."""
        return {**body, "contents": items}

    def with_note(self, body: dict[str, Any], note: str) -> dict[str, Any] | None:
        """A user ``Content`` saying ``note`` after the request's contents."""
        items = self.request_items(body)
        return None if items is None else self.with_request_items(body, [*items, {"role": "user",
                                                                                   "parts": [{"text": note}]}])

    def item_tool_calls(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """The ``functionCall`` parts of a ``model`` Content, as ``tool_use`` blocks."""
        if item.get("role") != "model":
            return []
        return [block for block in content_blocks(item.get("parts")) if block["type"] == "tool_use"]

    def item_tool_results(self, item: dict[str, Any]) -> list[ToolResultRef]:
        """The ``functionResponse`` parts of a Content (``position``: the part's index)."""
        parts = item.get("parts")
        results = []
        blocks = iter(block for block in content_blocks(parts) if block["type"] == "tool_result")
        for position, part in enumerate(parts if isinstance(parts, list) else []):
            if isinstance(part, dict) and "functionResponse" in part:
                block = next(blocks)
                answer = part["functionResponse"]
                response = answer.get("response") if isinstance(answer, dict) else None
                results.append(ToolResultRef(position, block["tool_use_id"], response, bool(block.get("is_error"))))
        return results

    def with_tool_result(self, item: dict[str, Any], position: int, content: Content, is_error: bool) -> dict[str, Any]:
        """The ``functionResponse`` at ``position`` answering ``content`` instead (as its output, or under
        ``error``)."""
        parts = list(item.get("parts") or [])
        part = copy.deepcopy(parts[position])
        answer = part["functionResponse"]
        answer["response"] = answered_response(answer.get("response"), content, is_error)
        parts[position] = part
        return {**item, "parts": parts}

    # -- response ----------------------------------------------------------------------------------------

    def response_to_canonical(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The first candidate's content as the assistant message; ``meta`` is the body without its parts
        (kept under ``_gemini`` so that ``canonical_to_response`` gives the body back exactly)."""
        if self.response_error(body) is not None:
            return None, copy.deepcopy(body)
        meta = copy.deepcopy(body)
        candidate = _first_candidate(meta)
        content = candidate.get("content") if candidate is not None else None
        if not isinstance(content, dict):
            meta[_HINTS] = {"no_content": True}
            return {"role": "assistant", "content": []}, meta
        parts = content.pop("parts", None)
        meta[_HINTS] = {"parts": parts}
        return {"role": "assistant", "content": content_blocks(parts)}, meta

    def canonical_to_response(
        self, message: dict[str, Any] | None, meta: dict[str, Any] | None = None, **overrides: Unpack[Overrides]
    ) -> dict[str, Any]:
        """The response for a canonical assistant message (the inverse of ``response_to_canonical``); without
        ``meta``, a complete one is made up (``finishReason`` ``STOP``)."""
        model, usage, stop_reason = overridden(overrides)
        body = copy.deepcopy(meta or {})
        hints = body.pop(_HINTS, {})
        if message is None:
            return body
        blocks = [block for block in message.get("content") or [] if isinstance(block, dict)]
        if not hints:
            body = {"candidates": [{"content": {"role": "model"}, "finishReason": "STOP", "index": 0}],
                    "modelVersion": model or "unknown", "responseId": content_hash(blocks, 24), **body}
        if not hints.get("no_content"):
            original = hints.get("parts")
            same = isinstance(original, list) and content_blocks(original) == blocks
            candidate = _first_candidate(body)
            assert candidate is not None
            content: dict[str, Any] = candidate["content"] if isinstance(candidate.get("content"), dict) else {
                "role": "model"}
            candidate["content"] = {"parts": original if same else block_parts(blocks), **content}
            if stop_reason is not None:
                candidate["finishReason"] = stop_reason
        if model is not None:
            body["modelVersion"] = model
        if usage is not None:
            body["usageMetadata"] = _render_usage(usage)
        return body

    def response_usage(self, body: dict[str, Any]) -> Usage:
        """``usageMetadata`` as Anthropic counts: input = prompt - cached, output = candidates + thoughts."""
        usage = body.get("usageMetadata")
        if not isinstance(usage, dict):
            return Usage()
        counts = {key: value for key, value in usage.items() if isinstance(value, int)}
        prompt, cached = counts.get("promptTokenCount"), counts.get("cachedContentTokenCount")
        output = [counts[key] for key in ("candidatesTokenCount", "thoughtsTokenCount") if key in counts]
        extra = {key: value for key, value in usage.items() if key not in ("promptTokenCount", "candidatesTokenCount")}
        return Usage(input_tokens=prompt - (cached or 0) if prompt is not None else None,
                     output_tokens=sum(output) if output else None, cache_read_input_tokens=cached,
                     **extra)  # fmt: skip

    def response_stop_reason(self, body: dict[str, Any]) -> str | None:
        """The first candidate's ``finishReason``, or the prompt's ``blockReason`` when none answered."""
        candidate = _first_candidate(body)
        if candidate is not None:
            reason = candidate.get("finishReason")
            return reason if isinstance(reason, str) else None
        feedback = body.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        return reason if isinstance(reason, str) else None

    def canonical_stop_reason(self, body: dict[str, Any]) -> str | None:
        """``STOP`` -> ``end_turn`` (``tool_use`` when the reply calls a function), ``MAX_TOKENS`` ->
        ``max_tokens``, the safety reasons and a blocked prompt -> ``refusal``; others as they are."""
        reason = self.response_stop_reason(body)
        if reason is None:
            return None
        if _first_candidate(body) is None:
            return "refusal"  # no candidate: the prompt was blocked (promptFeedback.blockReason)
        message = self.response_message(body)
        if reason == "STOP" and message and any(b.get("type") == "tool_use" for b in message["content"]):
            return "tool_use"
        return _STOP_REASONS.get(reason, reason)

    def response_model(self, body: dict[str, Any]) -> str | None:
        """``modelVersion``."""
        model = body.get("modelVersion")
        return model if isinstance(model, str) else None

    def response_id(self, body: dict[str, Any]) -> str | None:
        """``responseId``."""
        value = body.get("responseId")
        return value if isinstance(value, str) else None

    def reply_items(self, body: dict[str, Any]) -> list[Any]:
        """The first candidate's ``Content``, as a later request repeats it."""
        candidate = _first_candidate(body)
        content = candidate.get("content") if candidate is not None else None
        return [content] if isinstance(content, dict) else []

    def response_error(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """``{"type": status, "message", "code"}`` of an error body."""
        error = body.get("error")
        if not isinstance(error, dict) or "candidates" in body:
            return None
        return {"type": error.get("status") or "error", "message": error.get("message", ""),
                **{key: value for key, value in error.items() if key not in ("status", "message")}}  # fmt: skip

    def error_body(self, status: int, message: str, type: str | None = None, code: str | None = None) -> dict[str, Any]:
        """``{"error": {"code": status, "message", "status"}}`` (the google.rpc status the API sends)."""
        name = type if type is not None and type.isupper() else _STATUSES.get(status, "INTERNAL" if status >= 500
                                                                               else "INVALID_ARGUMENT")
        return {"error": {"code": status, "message": message, "status": name}}

    # -- stream ------------------------------------------------------------------------------------------

    def stream_assembler(self) -> StreamAssembler:
        """A ``GeminiStreamAssembler``."""
        return GeminiStreamAssembler()

    def render_stream(self, body: dict[str, Any]) -> bytes:
        """A response as chunks, one per part (``gemini_stream.render_chunks``)."""
        return render_stream(body)

    def stream_may_end(self, chunk: bytes) -> bool:
        """Whether the chunk may hold the final chunk (one with a ``finishReason``) or an error."""
        return b'"finishReason"' in chunk or b'"error"' in chunk

    def error_event(self, error_type: str, message: str) -> bytes:
        """An error body as a chunk (the API ends a failed stream with its error object)."""
        return encode_json_event(self.error_body(500, message, error_type))


def _first_candidate(body: dict[str, Any]) -> dict[str, Any] | None:
    candidates = body.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        return candidates[0]
    return None


def _render_usage(usage: Usage) -> dict[str, Any]:
    cached = usage.cache_read_input_tokens or 0
    prompt = (usage.input_tokens or 0) + cached
    output = usage.output_tokens or 0
    rendered: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": output,
                                "totalTokenCount": prompt + output}
    if usage.cache_read_input_tokens is not None:
        rendered["cachedContentTokenCount"] = cached
    return rendered


GEMINI = Gemini()
"""The provider (registered as ``gemini``)."""

