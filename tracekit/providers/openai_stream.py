"""Chat completion streams: chunks merged into a completion, and a completion split into chunks.

The merge mirrors openai-python's ``ChatCompletionStreamState._accumulate_chunk`` and
``lib/streaming/_deltas.accumulate_delta`` (read, not copied): the first chunk becomes the snapshot;
each later choice delta merges into its message key by key (strings concatenate, numbers add, dicts
merge, lists of ``{"index": ...}`` entries merge by index, other lists extend; ``index`` and ``type``
are replaced); ``finish_reason`` is set when given; ``usage`` and ``system_fingerprint`` follow the
latest chunk; chunks whose ``object`` is not ``chat.completion.chunk`` are skipped (Azure's filter
events).
"""

from __future__ import annotations

import copy
from typing import Any

from tracekit.providers.base import AssemblerBase, event_object
from tracekit.providers.sse import ServerSentEvent

_CHUNK = "chat.completion.chunk"


class OpenAIStreamAssembler(AssemblerBase):
    """Accumulates chat completion chunks into the completion body, as the official SDK does
    (``error`` holds ``{"error": {...}}`` when a chunk carried one; ``done`` turns true at ``[DONE]``)."""

    def __init__(self) -> None:
        super().__init__()
        self._snapshot: dict[str, Any] | None = None

    def _snapshot_body(self) -> dict[str, Any]:
        if self._snapshot is None:
            return {}
        body = copy.deepcopy(self._snapshot)
        for choice in body.get("choices") or []:
            for call in (choice.get("message") or {}).get("tool_calls") or []:
                if isinstance(call, dict):
                    call.pop("index", None)
        return body

    def feed(self, event: ServerSentEvent) -> None:
        """Apply one event: a chunk, ``[DONE]``, or an error object."""
        if event.data.startswith("[DONE]"):
            self._done = True
            return
        chunk = event_object(event)
        if chunk is None:
            return
        if chunk.get("error"):
            self._error = {"error": chunk["error"]}
            return
        if chunk.get("object", _CHUNK) != _CHUNK:
            return
        if self._snapshot is None:
            self._snapshot = _first_snapshot(chunk)
        else:
            _accumulate_chunk(self._snapshot, chunk)


def _first_snapshot(chunk: dict[str, Any]) -> dict[str, Any]:
    snapshot = copy.deepcopy(chunk)
    snapshot.pop("obfuscation", None)
    snapshot["object"] = "chat.completion"
    choices = snapshot.get("choices") or []
    for position, choice in enumerate(list(choices)):
        if isinstance(choice, dict):
            delta = choice.pop("delta", None) or {}
            choice["message"] = accumulate_delta({}, delta)
            choices[position] = choice
    return snapshot


def _accumulate_chunk(snapshot: dict[str, Any], chunk: dict[str, Any]) -> None:
    choices = snapshot.setdefault("choices", [])
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        index = choice.get("index", 0)
        delta = copy.deepcopy(choice.get("delta") or {})
        target = next((c for c in choices if c.get("index") == index), None)
        if target is None:
            target = {k: copy.deepcopy(v) for k, v in choice.items() if k != "delta"}
            target["message"] = accumulate_delta({}, delta)
            choices.append(target)
        else:
            target["message"] = accumulate_delta(target.get("message") or {}, delta)
        if choice.get("finish_reason"):
            target["finish_reason"] = choice["finish_reason"]
        _merge_logprobs(target, choice.get("logprobs"))
    for key in ("usage", "system_fingerprint"):
        if key in chunk or key in snapshot:
            snapshot[key] = copy.deepcopy(chunk.get(key))
    if chunk.get("moderation") is not None:
        snapshot["moderation"] = copy.deepcopy(chunk["moderation"])


def _merge_logprobs(target: dict[str, Any], logprobs: Any) -> None:
    if not isinstance(logprobs, dict):
        return
    current = target.get("logprobs")
    if current is None:
        target["logprobs"] = {"content": logprobs.get("content"), "refusal": logprobs.get("refusal")}
        return
    for key in ("content", "refusal"):
        if logprobs.get(key):
            current[key] = (current.get(key) or []) + copy.deepcopy(logprobs[key])


def accumulate_delta(acc: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """Merge one message delta into the accumulated message (the SDK's rules, see the module doc)."""
    for key, value in delta.items():
        if key not in acc or acc[key] is None:
            if not _has_indexed_entries(value):
                acc[key] = value
                continue
            acc[key] = []
        current = acc[key]
        if key in ("index", "type"):
            acc[key] = value
            continue
        both_text = isinstance(current, str) and isinstance(value, str)
        if both_text or (isinstance(current, (int, float)) and isinstance(value, (int, float))):
            current += value
        elif isinstance(current, dict) and isinstance(value, dict):
            current = accumulate_delta(current, value)
        elif isinstance(current, list) and isinstance(value, list):
            if all(isinstance(x, (str, int, float)) for x in current) and (current or not _has_indexed_entries(value)):
                current.extend(value)
                acc[key] = current
                continue
            for entry in value:
                if not isinstance(entry, dict) or not isinstance(entry.get("index"), int):
                    continue
                position = entry["index"]
                if position < len(current) and isinstance(current[position], dict):
                    current[position] = accumulate_delta(current[position], entry)
                else:
                    current.insert(position, entry)
        acc[key] = current
    return acc


def _has_indexed_entries(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(entry, dict) and "index" in entry for entry in value)


def render_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat completion as the chunks that accumulate back into it (usage in a last, choice-less chunk)."""
    base = {"id": body.get("id"), "object": _CHUNK, "created": body.get("created"), "model": body.get("model")}
    tail = {key: body[key] for key in ("system_fingerprint",) if key in body}
    first_extra = {k: v for k, v in body.items() if k not in ("choices", "usage", "object", *base, *tail)}
    chunks: list[dict[str, Any]] = []
    for choice in body.get("choices") or []:
        chunks.extend(_choice_chunks(choice))
    if not chunks:
        chunks.append({"choices": []})
    chunks = [{**base, **chunk, **tail} for chunk in chunks]
    chunks[0].update(copy.deepcopy(first_extra))
    if body.get("usage") is not None:
        chunks.append({**base, "choices": [], **tail, "usage": copy.deepcopy(body["usage"])})
    elif "usage" in body:
        chunks[-1]["usage"] = None
    return chunks


def _choice_chunks(choice: dict[str, Any]) -> list[dict[str, Any]]:
    index = choice.get("index", 0)
    message = choice.get("message") or {}
    grown = ("content", "refusal", "reasoning_content")
    first = {k: ("" if k in grown and isinstance(v, str) else copy.deepcopy(v))
             for k, v in message.items() if k != "tool_calls" or not v}
    extras = {k: copy.deepcopy(v) for k, v in choice.items() if k not in ("index", "message", "finish_reason")}
    chunks = [{"choices": [{"index": index, "delta": first, **extras, "finish_reason": None}]}]

    def add(delta: dict[str, Any]) -> None:
        chunks.append({"choices": [{"index": index, "delta": delta, "finish_reason": None}]})

    for key in grown:
        if isinstance(message.get(key), str) and message[key]:
            add({key: message[key]})
    calls = message.get("tool_calls")
    for position, call in enumerate(calls if isinstance(calls, list) else []):
        function = dict(call.get("function") or {})
        arguments = function.pop("arguments", "")
        head = {**copy.deepcopy(call), "index": position, "function": {**function, "arguments": ""}}
        add({"tool_calls": [head]})
        if arguments:
            add({"tool_calls": [{"index": position, "function": {"arguments": arguments}}]})
    chunks.append({"choices": [{"index": index, "delta": {}, "finish_reason": choice.get("finish_reason")}]})
    return chunks
