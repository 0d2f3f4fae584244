"""Requests to routes that are not model endpoints tracekit reads: forwarded, recorded, replayed.

Token counting, model lists, an API tracekit does not know: the request is forwarded as it came and the
answer passed on chunk by chunk. The exchange is written as an ``http_exchange`` record (method, path,
query with secret parameters removed, status, headers with secret values replaced, both bodies), in the
trace of the session its ``x-tracekit-session`` header names, or else in the recording's side file. Replay
answers it by method, path and canonical body (``route_key``).

A route that produces model output (a known generation endpoint, or any answer that streams) is recorded
raw: analysis does not see it. The proxy says so on stderr, once per route, and ``tracekit record`` counts
these exchanges at exit, so a recording that missed the agent's model calls never looks complete.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from aiohttp import web

from tracekit.proxy import limits
from tracekit.proxy.answers import SSE_CONTENT_TYPE, UPSTREAM_READ_ERRORS, Answer, UpstreamClient, read_failure
from tracekit.proxy.decoding import BodyRefused
from tracekit.proxy.headers import SESSION_HEADER, recorded_request_headers, recorded_response_headers
from tracekit.proxy.keys import route_key
from tracekit.proxy.raw_text import text_of
from tracekit.proxy.recorder import Recorder
from tracekit.proxy.refusals import error_response, provider_for_request
from tracekit.proxy.relay import drop_connection
from tracekit.proxy.replayer import ReplayIndex, route_answer
from tracekit.proxy.request import clean_text, parse_body
from tracekit.proxy.request_secrets import SECRET_QUERY_PARAMETERS
from tracekit.proxy.sessions import SessionRegistry
from tracekit.redact import REPLACEMENT, Redactor
from tracekit.trace import HttpExchange

log = logging.getLogger(__name__)

#: Paths (or path endings) of endpoints that generate model output: OpenAI's Responses and legacy
#: completions, Anthropic's legacy completions, Gemini's generateContent, Ollama's generate and chat.
MODEL_OUTPUT_PATHS = ("/v1/responses", "/v1/completions", "/v1/complete", ":generateContent",
                      ":streamGenerateContent", "/api/generate", "/api/chat")  # fmt: skip


def produces_model_output(path: str, content_type: str) -> bool:
    """Whether an answer on ``path`` with ``content_type`` is model output (see ``MODEL_OUTPUT_PATHS``)."""
    return content_type.startswith(SSE_CONTENT_TYPE) or any(marker in path for marker in MODEL_OUTPUT_PATHS)


def public_query(query: str) -> str | None:
    """The query string with the values of secret parameters replaced (None when empty)."""
    if not query:
        return None
    pairs = [(name, REPLACEMENT if name.lower() in SECRET_QUERY_PARAMETERS else value)
             for name, value in parse_qsl(query, keep_blank_values=True)]  # fmt: skip
    return urlencode(pairs, safe="[]") if pairs else query


@dataclass(frozen=True)
class _Incoming:
    """A request to another route, made safe (as ``tracekit.proxy.request`` does for model requests)."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    raw: bytes
    body: Any
    key: str
    t_wall: float
    t0: float


@dataclass(eq=False)
class OtherRoutes:
    """Forwards (record), answers (replay) and records requests to other routes."""

    upstream: UpstreamClient | None
    index: ReplayIndex | None
    registry: SessionRegistry
    recorder: Recorder | None
    redactor: Redactor
    timing: str = "instant"
    max_kept: int = limits.MAX_KEPT_STREAM_BYTES
    """Bytes of an answer the trace keeps (``ProxyConfig.max_kept_stream_bytes``); marked truncated past them."""
    misses: list[str] = field(default_factory=list, init=False)
    _announced: set[tuple[str, str]] = field(default_factory=set, init=False)

    async def handle(self, request: web.Request, raw: bytes, headers: dict[str, str]) -> web.StreamResponse:
        """Answer one request (its body read, its headers clean and their secrets registered)."""
        path = clean_text(request.path)
        body, _ = parse_body(raw)
        incoming = _Incoming(request.method, path, clean_text(request.query_string), headers, raw, body,
                             route_key(request.method, path, body, raw), time.time(), time.perf_counter())  # fmt: skip
        if self.index is not None:
            recorded = self.index.lookup_other(incoming.key)
            if recorded is not None:
                return await self._pass_on(request, incoming, route_answer(recorded, self.timing), replayed=True)
        if self.upstream is None:
            return self._miss(request, incoming)
        answer = await self.upstream.request(incoming.method, incoming.path, incoming.query, raw, headers)
        return await self._pass_on(request, incoming, answer, replayed=False)

    def first_time(self, method: str, path: str) -> bool:
        """Whether this route is announced for the first time (each is announced on stderr once)."""
        if (method, path) in self._announced:
            return False
        self._announced.add((method, path))
        return True

    def _miss(self, request: web.Request, incoming: _Incoming) -> web.Response:
        recorded = self.index.other.values() if self.index is not None else ()
        route = (incoming.method, incoming.path)
        count = sum(1 for answers in recorded if (answers[0].method, answers[0].path) == route)
        message = (f"tracekit replay: no recording matches {incoming.method} {incoming.path} (key {incoming.key}); "
                   f"{count} other requests to this route are recorded")  # fmt: skip
        self.misses.append(message)
        log.warning("%s", message)
        response = error_response(provider_for_request(incoming.path, incoming.headers), 404, message)
        response.headers["x-tracekit-replay"] = "miss"
        return response

    async def _pass_on(
        self, request: web.Request, incoming: _Incoming, answer: Answer, *, replayed: bool
    ) -> web.StreamResponse:
        if answer.failure is not None:
            self._record(incoming, answer, b"", replayed=replayed)
            if answer.failure == "reset":
                return drop_connection(request)
            provider = provider_for_request(incoming.path, incoming.headers)
            return error_response(provider, answer.status, f"tracekit proxy: {answer.failure_detail}")
        chunks: list[bytes] = []
        kept = 0
        truncated = False
        failure: str | None = None
        response = web.StreamResponse(status=answer.status, headers=answer.headers)
        try:
            await response.prepare(request)
            async for chunk in answer.chunks():
                # The trace keeps the first ``max_kept`` bytes; the client gets everything.
                if not truncated and kept + len(chunk) <= self.max_kept:
                    chunks.append(chunk)
                    kept += len(chunk)
                else:
                    truncated = True
                await response.write(chunk)
            await response.write_eof()
        except UPSTREAM_READ_ERRORS as exc:
            failure = read_failure(exc)
        except BodyRefused as exc:
            failure = exc.failure
        except ConnectionError:
            failure = "client_gone"
        finally:
            answer.close()
            self._record(incoming, answer, b"".join(chunks), replayed=replayed, failure=failure, truncated=truncated)
        if failure in ("cut", "read_timeout", "undecodable"):
            return drop_connection(request, response)
        return response

    def _record(
        self, incoming: _Incoming, answer: Answer, body: bytes, *, replayed: bool, failure: str | None = None,
        truncated: bool = False,
    ) -> None:
        if self.recorder is None:
            return
        content_type = answer.headers.get("content-type", "")
        model_output = answer.failure is None and produces_model_output(incoming.path, content_type)
        escaped: list[str] = []
        request_body, request_raw = _body_fields(incoming.body, incoming.raw, "request_raw", escaped)
        response_json, _ = parse_body(body) if "json" in content_type else (None, None)
        response_body, response_raw = _body_fields(response_json, body, "response_raw", escaped)
        record = HttpExchange(
            t=incoming.t_wall,
            method=incoming.method,
            path=incoming.path,
            query=public_query(incoming.query),
            status=answer.status if answer.failure is None else None,
            request_key=incoming.key,
            request_headers=recorded_request_headers(incoming.headers) or None,
            request=request_body,
            request_raw=request_raw,
            response_headers=recorded_response_headers(answer.headers.items()) or None,
            response=response_body,
            response_raw=response_raw,
            latency_ms=round((time.perf_counter() - incoming.t0) * 1000, 3),
            model_output=True if model_output else None,
            transport=answer.failure or failure,
            replayed=True if replayed else None,
            escaped=escaped or None,
            **({"truncated": True} if truncated else {}),
        )
        named = incoming.headers.get(SESSION_HEADER)
        session = self.registry.named_session(named, self.redactor.redact_text(named)) if named else None
        where = self.recorder.record_other(session, record)
        if model_output and not replayed and self.first_time(incoming.method, incoming.path):
            log.warning("tracekit: %s %s answers with model output that tracekit does not read; it is recorded raw "
                        "in %s (replay gives it back; analyze does not see it)", incoming.method, incoming.path,
                        where.name if where is not None else "the recording")  # fmt: skip


def _body_fields(parsed: Any, raw: bytes, raw_field: str, escaped: list[str]) -> tuple[Any, str | None]:
    """(parsed JSON, None) when the body is JSON, else (None, its text); an escaped text is noted."""
    if parsed is not None:
        return parsed, None
    if not raw:
        return None, None
    text, was_escaped = text_of(raw)
    if was_escaped:
        escaped.append(raw_field)
    return None, text
