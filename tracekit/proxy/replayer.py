"""Replay: answering requests from recordings by their canonical key.

``ReplayIndex`` loads the model calls of every trace in a folder (and the failed attempts an SDK
retried, so retries replay as they happened). Identical keys are answered first-in, first-out; once
all answers of a key were given, they are given again in the same order (a recording can be replayed
any number of times through one server). Answers the proxy made itself are not indexed: an
``http_error`` fault makes its answer again when the case is replayed, and a replay-miss error is no
answer at all.

A client asking for a stream gets SSE even when the recording was JSON, and the other way round.
``timing="recorded"`` reproduces the recorded time to first byte and the gaps between events.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from multidict import CIMultiDict

from tracekit.providers import PROVIDERS
from tracekit.providers.base import Provider
from tracekit.proxy.answers import SSE_CONTENT_TYPE, Answer, json_answer
from tracekit.proxy.keys import first_difference, normalized_request, request_key
from tracekit.proxy.sse_events import split_events
from tracekit.trace import ErrorRecord, ModelCall, ReadProblem, iter_records, trace_files

log = logging.getLogger(__name__)

#: Recorded response headers given back (content type and length are set for the answer given).
_REPLAYED_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry", "request-id", "x-request-id")


@dataclass
class RecordedAnswer:
    """One recorded answer to a request."""

    where: str
    """``file.jsonl model_call 3`` (or ``... attempt 1 of model_call 3`` for a failed attempt)."""
    provider: Provider
    request: Any
    status: int
    response: dict[str, Any] | None
    sse: str | None
    offsets_ms: list[float] | None
    latency_ms: float | None
    ttft_ms: float | None
    partial: bool
    transport: str | None
    headers: dict[str, str]


class ReplayIndex:
    """Recorded answers by request key."""

    def __init__(self) -> None:
        self.answers: dict[str, list[RecordedAnswer]] = defaultdict(list)
        self.problems: list[ReadProblem] = []
        self.files = 0
        self._next: dict[str, int] = {}

    def __len__(self) -> int:
        return sum(len(answers) for answers in self.answers.values())

    @classmethod
    def load(cls, folder: str | Path) -> ReplayIndex:
        """Index every trace file under ``folder``."""
        index = cls()
        for path in trace_files([folder]):
            index.add_file(path)
        return index

    def add_file(self, path: Path) -> None:
        """Index the answers recorded in one trace file."""
        self.files += 1
        for record in iter_records(path, self.problems):
            if isinstance(record, ModelCall):
                extra = record.model_extra or {}
                made_here = extra.get("fault") or extra.get("replay_miss") or extra.get("from_attempts")
                if made_here or not record.request_key:
                    continue
                self.add(record.request_key, self._from_model_call(path, record))
            elif isinstance(record, ErrorRecord):
                extra = record.model_extra or {}
                if extra.get("request_key"):
                    self.add(str(extra["request_key"]), self._from_error(path, record, extra))

    def add(self, key: str, answer: RecordedAnswer) -> None:
        """Queue one more answer for ``key``."""
        self.answers[key].append(answer)

    def lookup(self, key: str) -> RecordedAnswer | None:
        """The next answer for ``key`` (FIFO, starting over once all were given), or None on a miss."""
        answers = self.answers.get(key)
        if not answers:
            return None
        position = self._next.get(key, 0)
        self._next[key] = (position + 1) % len(answers)
        return answers[position]

    def nearest(self, route: str, body: Any) -> tuple[RecordedAnswer, str] | None:
        """The recorded request most like ``body`` on ``route`` and where they first differ."""
        live = normalized_request(body)
        best: tuple[tuple[int, int, int], RecordedAnswer] | None = None
        for answers in self.answers.values():
            answer = next((a for a in answers if a.request is not None), None)
            if answer is None or route != answer.provider.ROUTE:
                continue
            score = _likeness(normalized_request(answer.request), live)
            if best is None or score > best[0]:
                best = (score, answer)
        if best is None:
            return None
        return best[1], first_difference(best[1].request, body)

    @staticmethod
    def _from_model_call(path: Path, record: ModelCall) -> RecordedAnswer:
        extra = record.model_extra or {}
        return RecordedAnswer(
            where=f"{path.name} model_call {record.index}",
            provider=PROVIDERS[record.provider],
            request=record.request,
            status=record.status or 200,
            response=record.response,
            sse=record.sse,
            offsets_ms=record.event_offsets_ms,
            latency_ms=record.latency_ms,
            ttft_ms=record.ttft_ms,
            partial=record.partial,
            transport=extra.get("transport"),
            headers=dict(extra.get("response_headers") or {}),
        )

    @staticmethod
    def _from_error(path: Path, record: ErrorRecord, extra: dict[str, Any]) -> RecordedAnswer:
        body = record.body if isinstance(record.body, dict) else None
        return RecordedAnswer(
            where=f"{path.name} attempt {extra.get('attempt', '?')} of model_call {record.model_call}",
            provider=PROVIDERS[str(extra.get("provider") or "anthropic")],
            request=None,
            status=record.status or 502,
            response=body,
            sse=extra.get("sse"),
            offsets_ms=extra.get("event_offsets_ms"),
            latency_ms=extra.get("latency_ms"),
            ttft_ms=None,
            partial=bool(extra.get("partial")),
            transport=extra.get("transport"),
            headers=dict(extra.get("response_headers") or {}),
        )


def _likeness(recorded: Any, live: Any) -> tuple[int, int, int]:
    """How alike two request bodies are: same model, shared leading messages, equal top-level fields."""
    if not isinstance(recorded, dict) or not isinstance(live, dict):
        return (0, 0, 0)
    same_model = int(recorded.get("model") == live.get("model"))
    shared = 0
    for old, new in zip(_listed(recorded.get("messages")), _listed(live.get("messages")), strict=False):
        if old != new:
            break
        shared += 1
    equal_fields = sum(1 for key, value in live.items() if key != "messages" and recorded.get(key) == value)
    return (same_model, shared, equal_fields)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def recorded_answer(recorded: RecordedAnswer, want_stream: bool, timing: str) -> Answer:
    """The answer to give for ``recorded``, shaped as the client asked (SSE or JSON)."""
    provider = recorded.provider
    headers: CIMultiDict[str] = CIMultiDict(
        (name, value) for name, value in recorded.headers.items() if name in _REPLAYED_HEADERS
    )
    headers["x-tracekit-replay"] = "hit"
    timed = timing == "recorded"
    if recorded.transport in ("connect", "reset"):
        if recorded.transport == "reset":
            return Answer(502, headers, failure="reset", failure_detail="recorded: upstream closed the connection")
        message = "tracekit proxy: the upstream could not be reached (recorded)"
        return json_answer(recorded.status, recorded.response or provider.error_body(recorded.status, message))
    if recorded.sse is None and recorded.status >= 400:
        body = recorded.response or provider.error_body(recorded.status, "recorded error")
        delay = (recorded.latency_ms or 0) / 1000 if timed else 0.0
        return json_answer(recorded.status, body, dict(headers), first_delay=delay)
    if want_stream or (recorded.sse is not None and recorded.partial):
        if recorded.sse is not None:
            events = split_events(recorded.sse.encode("utf-8"))
            offsets = recorded.offsets_ms or []
        else:
            events = split_events(provider.render_stream(recorded.response or {}))
            offsets = [recorded.latency_ms or 0.0] * len(events)
        delays = _gaps(offsets, len(events)) if timed else None
        headers["content-type"] = SSE_CONTENT_TYPE
        headers["cache-control"] = "no-cache"
        return Answer(recorded.status, headers, chunks=events, delays=delays, cut=recorded.partial)
    body_bytes = orjson.dumps(recorded.response or {})
    headers["content-type"] = "application/json"
    delay = (recorded.latency_ms or 0) / 1000 if timed else 0.0
    return Answer(recorded.status, headers, body=body_bytes, first_delay=delay)


def _gaps(offsets_ms: list[float], count: int) -> list[float]:
    """Seconds to wait before each event so that event ``i`` leaves at ``offsets_ms[i]``."""
    gaps = []
    previous = 0.0
    for index in range(count):
        offset = offsets_ms[index] if index < len(offsets_ms) else previous
        gaps.append(max(0.0, (offset - previous) / 1000))
        previous = max(previous, offset)
    return gaps


def miss_answer(index: ReplayIndex, provider: Provider, route: str, body: Any, key: str) -> tuple[Answer, str]:
    """The provider-shaped error for a request no recording matches, and its message."""
    nearest = index.nearest(route, body)
    if nearest is None:
        message = f"tracekit replay: no recording matches this request (key {key}); no request to {route} is recorded"
    else:
        answer, difference = nearest
        message = (
            f"tracekit replay: no recording matches this request (key {key}). "
            f"Nearest recorded request: {answer.where}; first difference: {difference}"
        )
    return json_answer(404, provider.error_body(404, message), {"x-should-retry": "false",
                                                                "x-tracekit-replay": "miss"}), message


__all__ = ["RecordedAnswer", "ReplayIndex", "miss_answer", "recorded_answer", "request_key"]
