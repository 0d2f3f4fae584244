"""Replay: answering requests from recordings by their canonical key.

``ReplayIndex`` loads the model calls of every trace in a folder (and the failed attempts an SDK
retried, so retries replay as they happened). Identical keys are answered first-in, first-out; once
all answers of a key were given, they are given again in the same order (a recording can be replayed
any number of times through one server). Answers the proxy made itself are not indexed: an
``http_error`` fault makes its answer again when the case is replayed, and a replay-miss error is no
answer at all.

A client asking for a stream gets SSE even when the recording was JSON, and the other way round.
``timing="recorded"`` reproduces the recorded time to first byte and the gaps between events. What was
recorded as it came (a body that is not JSON, SSE bytes that are not UTF-8) is given back byte for byte.

Requests to other routes (``http_exchange`` records) are answered by method, path and canonical body,
first-in, first-out the same way.

Loading reads each file with the replay reader (``replay_reader``: only the records replay uses, bodies
as JSON bytes) and hashes the recorded requests for ``nearest`` from those bytes (``raw_hashes``); a file
that reader gives up on is read into the record models, as every file was before, to the same index.
"""

from __future__ import annotations

import gc
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any

from multidict import CIMultiDict

from tracekit.errors import TracekitError
from tracekit.providers import PROVIDERS
from tracekit.providers.base import Provider, split_stream
from tracekit.proxy.answers import SSE_CONTENT_TYPE, Answer, json_answer
from tracekit.proxy.exchange import NO_RESPONSE_FAILURES
from tracekit.proxy.headers import client_response_headers
from tracekit.proxy.keys import first_difference, request_key
from tracekit.proxy.matching import MatchRules, masked
from tracekit.proxy.nearest import NearestIndex, RequestHashes, aligned, request_hashes
from tracekit.proxy.raw_hashes import RawHashes
from tracekit.proxy.recorded import (
    RecordedAnswer,
    RecordedRoute,
    attempt_answer,
    call_answer,
    error_provider,
    json_bytes,
    normalized_json,
    route_answer_of,
)
from tracekit.proxy.replay_reader import read_for_replay
from tracekit.proxy.shared_texts import resolve_shared_texts
from tracekit.trace import ErrorRecord, HttpExchange, ModelCall, ReadProblem, iter_records, trace_files

log = logging.getLogger(__name__)

#: Recorded response headers given back (content type and length are set for the answer given).
_REPLAYED_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry", "request-id", "x-request-id",
                     "x-amzn-errortype", "x-amzn-requestid")


class ReplayIndex:
    """Recorded answers by request key."""

    def __init__(self, rules: MatchRules | None = None) -> None:
        self.rules = rules or MatchRules()
        """What the ``volatile`` rung leaves out (``tracekit.proxy.matching``)."""
        self.answers: dict[str, list[RecordedAnswer]] = defaultdict(list)
        self.other: dict[str, list[RecordedRoute]] = defaultdict(list)
        """Answers of other routes, by ``route_key``."""
        self.problems: list[ReadProblem] = []
        self.files = 0
        self._next: dict[str, int] = {}
        self._nearest: NearestIndex[RecordedAnswer] = NearestIndex()
        self._order: dict[str, int] = {}
        """Each key's position among the keys (the earlier wins a tie in ``nearest``)."""
        self._headers: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        self._compared: set[str] = set()
        """Keys whose request takes part in ``nearest`` (the first answer of a key that has one)."""
        self._raw_hashes: RawHashes | None = None
        """The request hashes of the load under way (``load`` drops them when it ends)."""
        self._sessions: dict[str, list[RecordedAnswer]] = defaultdict(list)
        """Each recorded file's answered model calls, in file order (the ``session`` rung walks them)."""
        self._place: dict[int, tuple[str, int]] = {}
        """``id(answer)`` -> (its file, its position in ``_sessions[file]``)."""
        self._volatile: dict[str, list[RecordedAnswer]] | None = None
        """Answers by their ``volatile`` key, built on the first exact miss (a replay that never misses
        never parses a recorded request)."""
        self._followed: dict[str, tuple[str, int]] = {}
        """Live session id -> the recorded file and position it was last answered from."""

    def __len__(self) -> int:
        return sum(len(answers) for answers in self.answers.values())

    @classmethod
    def load(cls, folder: str | Path, *, fast: bool = True, rules: MatchRules | None = None) -> ReplayIndex:
        """Index every trace file under ``folder`` (``fast=False``: every file read into the record models,
        as the replay reader gives up on a file; the index is the same)."""
        index = cls(rules)
        # The load makes a few objects per exchange and frees none: the cyclic collector, run every few
        # hundred allocations, would walk all of them again and again (half of the load's time at 20,000
        # exchanges). It is paused meanwhile; the load makes no cycles for it to find.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for path in trace_files([folder]):
                index.add_file(path, fast=fast)
        finally:
            if collecting:
                gc.enable()
        index._raw_hashes = None
        return index

    def add_file(self, path: Path, *, fast: bool = True) -> None:
        """Index the answers recorded in one trace file."""
        self.files += 1
        if fast:
            records = read_for_replay(path)
            if records is not None and self._add_read(path.name, records):
                return
        records = list(iter_records(path, self.problems))
        resolve_shared_texts(records)
        for record in records:
            if isinstance(record, HttpExchange):
                if record.request_key:
                    response = json_bytes(record.response)
                    self.other[record.request_key].append(route_answer_of(path.name, record, response))
            elif isinstance(record, ModelCall):
                made_here = record.fault or record.replay_miss or record.from_attempts
                if not made_here and record.request_key and record.provider in PROVIDERS:
                    answer = call_answer(path.name, record, json_bytes(record.request), json_bytes(record.response),
                                         self._shared(record.response_headers))  # fmt: skip
                    self.add(record.request_key, answer, record.request)
                    self._in_session(path.name, answer)
            elif isinstance(record, ErrorRecord) and record.request_key and error_provider(record) in PROVIDERS:
                body = json_bytes(record.body) if isinstance(record.body, dict) else None
                self.add(
                    record.request_key, attempt_answer(path.name, record, body, self._shared(record.response_headers))
                )

    def _add_read(self, name: str, records: list[tuple[Any, tuple[bytes | None, ...]]]) -> bool:
        """Index the records of the replay reader (bodies as JSON bytes); False, with nothing indexed, when one
        holds what orjson does not take (the caller reads the file into the models then)."""
        if self._raw_hashes is None:
            self._raw_hashes = RawHashes()
        hashing = self._raw_hashes
        entries: list[tuple[str, RecordedAnswer, RequestHashes | None]] = []
        routes: list[tuple[str, RecordedRoute]] = []
        compared: set[str] = set()
        try:
            for record, bodies in records:
                kind, key = record.kind, record.request_key
                if not key:
                    continue
                if kind == "model_call":
                    if record.fault or record.replay_miss or record.from_attempts or record.provider not in PROVIDERS:
                        continue
                    request, response = bodies
                    answer = call_answer(name, record, request, normalized_json(response),
                                         self._shared(record.response_headers))  # fmt: skip
                    hashes = None
                    if request is not None and key not in self._compared and key not in compared:
                        compared.add(key)
                        hashes = hashing.request(answer.provider, request)
                    entries.append((key, answer, hashes))
                elif kind == "error":
                    if error_provider(record) not in PROVIDERS:
                        continue
                    (body,) = bodies
                    body_json = normalized_json(body) if body is not None and body[:1] == b"{" else None
                    answer = attempt_answer(name, record, body_json, self._shared(record.response_headers))
                    entries.append((key, answer, None))
                else:
                    routes.append((key, route_answer_of(name, record, normalized_json(bodies[0]))))
        except (ValueError, TypeError, RecursionError, TracekitError):
            # A value orjson does not take that the models do (an integer beyond 64 bits, ...): the models'
            # reader decides what it is, as for every file this reader gives up on.
            return False
        for key, answer, hashes in entries:
            self._add(key, answer, hashes)
            if answer.request_json is not None:  # a model call (a failed attempt records no request)
                self._in_session(name, answer)
        for key, route in routes:
            self.other[key].append(route)
        return True

    def add(self, key: str, answer: RecordedAnswer, request: Any = None) -> None:
        """Queue one more answer for ``key`` (the first that has a request is indexed for ``nearest``;
        ``request``: its parsed body when the caller has it, else parsed from ``answer.request_json``)."""
        hashes = None
        if self._compares(key, answer):
            hashes = request_hashes(answer.provider, request if request is not None else answer.request)
        self._add(key, answer, hashes)

    def _compares(self, key: str, answer: RecordedAnswer) -> bool:
        return answer.request_json is not None and key not in self._compared

    def _add(self, key: str, answer: RecordedAnswer, hashes: RequestHashes | None) -> None:
        order = self._order.setdefault(key, len(self._order))
        self.answers[key].append(answer)
        if self._compares(key, answer):
            self._compared.add(key)
            self._nearest.add_hashed(order, answer.provider, hashes, answer)

    def _in_session(self, name: str, answer: RecordedAnswer) -> None:
        calls = self._sessions[name]
        self._place[id(answer)] = (name, len(calls))
        calls.append(answer)

    def match(self, key: str, provider: Provider, body: Any, session: str) -> tuple[RecordedAnswer, str] | None:
        """The answer for a request and the rung that found it (``tracekit.proxy.matching``), or None on a miss.

        ``key`` is the request's exact key, ``body`` its parsed body, ``session`` the live session's id."""
        found = self.lookup(key)
        rung = "exact"
        if found is None and isinstance(body, dict):
            found, rung = self._lookup_volatile(provider, body), "volatile"
            if found is None:
                found, rung = self._next_in_session(provider, body, session), "session"
        if found is None:
            return None
        place = self._place.get(id(found))
        if place is not None:
            self._followed[session] = place
        return found, rung

    def _volatile_key(self, provider: Provider, body: Any) -> str:
        return request_key(provider.NAME, self.rules.volatile_body(body))

    def _lookup_volatile(self, provider: Provider, body: dict[str, Any]) -> RecordedAnswer | None:
        if self._volatile is None:
            self._volatile = defaultdict(list)
            for calls in self._sessions.values():
                for answer in calls:
                    request = answer.request
                    if isinstance(request, dict):
                        self._volatile[self._volatile_key(answer.provider, request)].append(answer)
        key = self._volatile_key(provider, body)
        answers = self._volatile.get(key)
        if not answers:
            return None
        return answers[self._advance("volatile:" + key, len(answers))]

    def _next_in_session(self, provider: Provider, body: dict[str, Any], session: str) -> RecordedAnswer | None:
        followed = self._followed.get(session)
        if followed is None:
            return None
        name, position = followed
        calls = self._sessions[name]
        if position + 1 >= len(calls):
            return None
        candidate = calls[position + 1]
        recorded = candidate.request
        # (by name: a provider whose route names the model is bound to each request, ``for_route``)
        if candidate.provider.NAME != provider.NAME or not isinstance(recorded, dict):
            return None
        if provider.request_model(recorded) != provider.request_model(body):
            return None
        same = masked(self.rules.volatile_body(recorded)) == masked(self.rules.volatile_body(body))
        return candidate if same else None

    def lookup(self, key: str) -> RecordedAnswer | None:
        """The next answer for ``key`` (FIFO, starting over once all were given), or None on a miss."""
        answers = self.answers.get(key)
        if not answers:
            return None
        return answers[self._advance(key, len(answers))]

    def lookup_other(self, key: str) -> RecordedRoute | None:
        """The next answer of another route for ``key`` (as ``lookup``), or None."""
        answers = self.other.get(key)
        if not answers:
            return None
        return answers[self._advance(key, len(answers))]

    def _advance(self, key: str, count: int) -> int:
        position = self._next.get(key, 0)
        self._next[key] = (position + 1) % count
        return position

    def nearest(self, route: str, body: Any) -> tuple[RecordedAnswer, str] | None:
        """The recorded request most like ``body`` on ``route`` and where they first differ (same model first,
        then the most leading messages in common, then the most equal top-level fields; see ``NearestIndex``)."""
        found = self._nearest.nearest(route, body)
        if found is None:
            return None
        answer, (_, shared, _) = found
        recorded = aligned(answer.provider, answer.request, body, shared)
        # The fields the ladder leaves out never made the miss: the difference named is one that did.
        return answer, first_difference(self.rules.volatile_body(recorded), self.rules.volatile_body(body))

    def _shared(self, headers: dict[str, str] | None) -> dict[str, str]:
        """One dict for each set of recorded response headers (most recordings repeat a few sets)."""
        items = tuple((headers or {}).items())
        return self._headers.setdefault(items, dict(items))


def recorded_answer(recorded: RecordedAnswer, want_stream: bool, timing: str) -> Answer:
    """The answer to give for ``recorded``, shaped as the client asked (SSE or JSON)."""
    provider = recorded.provider
    headers: CIMultiDict[str] = CIMultiDict(
        (name, value) for name, value in recorded.headers.items() if name in _REPLAYED_HEADERS
    )
    headers["x-tracekit-replay"] = "hit"
    timed = timing == "recorded"
    if recorded.transport == "reset":
        return Answer(502, headers, failure="reset", failure_detail="recorded: upstream closed the connection")
    if recorded.transport in NO_RESPONSE_FAILURES or (recorded.transport == "read_timeout" and recorded.sse is None):
        message = f"tracekit proxy: the upstream failed ({recorded.transport}, recorded)"
        return json_answer(recorded.status, recorded.response or provider.error_body(recorded.status, message))
    if recorded.raw is not None and recorded.sse is None:
        headers["content-type"] = recorded.headers.get("content-type", "application/octet-stream")
        delay = (recorded.latency_ms or 0) / 1000 if timed else 0.0
        return Answer(recorded.status, headers, body=recorded.raw, first_delay=delay)
    if recorded.sse is None and recorded.status >= 400:
        body = recorded.response or provider.error_body(recorded.status, "recorded error")
        delay = (recorded.latency_ms or 0) / 1000 if timed else 0.0
        return json_answer(recorded.status, body, dict(headers), first_delay=delay)
    if want_stream or (recorded.sse is not None and recorded.partial):
        if recorded.sse is not None:
            events = split_stream(provider.stream_splitter(), recorded.sse)
            offsets = recorded.offsets_ms or []
        else:
            events = split_stream(provider.stream_splitter(), provider.render_stream(recorded.response or {}))
            offsets = [recorded.latency_ms or 0.0] * len(events)
        delays = _gaps(offsets, len(events)) if timed else None
        headers["content-type"] = provider.STREAM_CONTENT_TYPE
        if provider.STREAM_CONTENT_TYPE == SSE_CONTENT_TYPE:
            headers["cache-control"] = "no-cache"
        return Answer(recorded.status, headers, chunks=events, delays=delays, cut=recorded.partial,
                      stream_type=provider.STREAM_CONTENT_TYPE)  # fmt: skip
    body_bytes = recorded.response_json or b"{}"
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


def route_answer(recorded: RecordedRoute, timing: str) -> Answer:
    """The answer to give for a recorded request to another route (status, headers and body as they came)."""
    headers = client_response_headers(recorded.headers)
    headers["x-tracekit-replay"] = "hit"
    delay = (recorded.latency_ms or 0) / 1000 if timing == "recorded" else 0.0
    return Answer(recorded.status, headers, body=recorded.body, first_delay=delay)


def miss_answer(index: ReplayIndex, provider: Provider, route: str, body: Any, key: str) -> tuple[Answer, str]:
    """The provider-shaped error for a request no recording matches, and its message."""
    nearest = index.nearest(provider.ROUTE, body)  # (recordings are grouped by the provider's route)
    if nearest is None:
        message = f"tracekit replay: no recording matches this request (key {key}); no request to {route} is recorded"
    else:
        answer, difference = nearest
        message = (
            f"tracekit replay: no recording matches this request (key {key}). "
            f"Nearest recorded request: {answer.where}; first difference: {difference}"
        )
    return json_answer(
        404, provider.error_body(404, message), {"x-should-retry": "false", "x-tracekit-replay": "miss"}
    ), message


__all__ = [
    "RecordedAnswer",
    "RecordedRoute",
    "ReplayIndex",
    "miss_answer",
    "recorded_answer",
    "request_key",
    "route_answer",
]
