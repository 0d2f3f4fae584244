"""A request as the proxy reads it: parsed once, at the edge, and never changed afterwards.

Everything a client sends is made safe here, before any of it reaches a session, a file name or a trace
line: header values and the path lose bytes that are not UTF-8 (aiohttp hands them over as lone
surrogates, which no JSON writer accepts), and the body is parsed and its conversation derived once, for
stitching and for the trace. (A session's name is redacted when the session is created, before anything
of it is written: a key-shaped name never becomes a file name.)

Example::

    parsed = read_request("/v1/messages", "", clean_headers(request.headers.items()), raw, anthropic)
    parsed.conversation.messages   # canonical messages, derived once
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracekit.providers.base import NOT_CONTINUED, Continuation, Provider
from tracekit.proxy.client_sessions import ClientSession, asks_structured_output, client_session, offers_tools
from tracekit.proxy.headers import SESSION_HEADER, retry_count
from tracekit.proxy.keys import request_key
from tracekit.trace.builder import message_fingerprint
from tracekit.trace.models import Content
from tracekit.trace.react_text import CALLING_TOOLS_JSON, react_history


@dataclass(frozen=True, slots=True)
class Conversation:
    """A request's conversation in canonical form (what it carries itself, not what a server keeps)."""

    system: Content | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    """Why no conversation could be derived from the body (the exchange is recorded all the same)."""
    _fingerprints: list[str] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def fingerprints(self) -> list[str]:
        """``message_fingerprint`` of each message, computed once (on first use) and shared by everything
        that compares this request's conversation: the session registry, the recording and the live guard."""
        fingerprints = self._fingerprints
        if fingerprints is None:
            fingerprints = [SEEN_MESSAGES.fingerprint(message) for message in self.messages]
            object.__setattr__(self, "_fingerprints", fingerprints)  # a cache: the conversation is immutable
        return fingerprints


class SeenMessages:
    """``message_fingerprint`` of the messages seen lately, by role and content: an agent re-sends its whole
    conversation with each request, so nearly every message of a request was fingerprinted for an earlier
    one, and looking it up costs a fraction of canonicalizing and hashing it again. The key is the content's
    text, or its JSON as sent (a different key order only misses), so a hit is always the fingerprint the
    message has. Bounded by the size of what it keys on (``limit`` characters or bytes): emptied when full."""

    def __init__(self, limit: int = 32 * 1024 * 1024) -> None:
        self.limit = limit
        self._fingerprints: dict[tuple[str | None, str | bytes], str] = {}
        self._size = 0

    def fingerprint(self, message: Any) -> str:
        """``message_fingerprint(message)``, from the cache when the same role and content were seen."""
        role = message.get("role") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not (role is None or isinstance(role, str)):
            return message_fingerprint(message)
        content = message.get("content")
        try:
            key = (role, content if isinstance(content, str) else orjson.dumps(content))
        except (TypeError, orjson.JSONEncodeError):  # content no JSON writer takes: not cached
            return message_fingerprint(message)
        found = self._fingerprints.get(key)
        if found is None:
            found = message_fingerprint(message)
            if self._size + len(key[1]) > self.limit:
                self._fingerprints.clear()
                self._size = 0
            self._fingerprints[key] = found
            self._size += len(key[1])
        return found

    def clear(self) -> None:
        """Forget every fingerprint."""
        self._fingerprints.clear()
        self._size = 0


#: The proxy's cache of message fingerprints (one event loop uses it; a lost race only recomputes one).
SEEN_MESSAGES = SeenMessages()

NO_CONVERSATION = Conversation()


def derive_conversation(provider: Provider, body: Any, raw: bytes | None = None) -> Conversation:
    """The canonical conversation of ``body`` (empty when the body is not a JSON object); tool calls and results
    that a ReAct-style client sends back as text are read as calls and results (``tracekit.trace.react_text``;
    only looked for when the body's JSON ``raw``, if given, holds their marker)."""
    if not isinstance(body, dict):
        return NO_CONVERSATION
    try:
        system, messages = provider.request_conversation(body)
    except Exception as exc:  # any shape a client sends ("messages": 3): forwarded and recorded as it is
        return Conversation(error=f"{type(exc).__name__}: {exc}")
    if raw is not None and CALLING_TOOLS_JSON not in raw:
        return Conversation(system, messages)
    return Conversation(system, react_history(messages))


@dataclass(frozen=True, slots=True)
class ParsedRequest:
    """One model request as the agent sent it (see the module docstring)."""

    provider: Provider
    route: str
    query: str
    headers: Mapping[str, str]
    """Lower-case names; values with bytes that are not UTF-8 replaced by U+FFFD."""
    raw: bytes
    body: Any
    parse_error: str | None
    """Why the body is not a JSON object ('empty body', orjson's message, 'not a JSON object: list')."""
    key: str
    """Replay key of the body as the agent sent it (retry detection)."""
    stream: bool
    continuation: Continuation
    conversation: Conversation
    session: str | None
    """The ``x-tracekit-session`` header (clean text): requests naming the same one form one trace."""
    retry_count: int | None
    upstream_path: str | None = None
    """The path as the client sent it (percent-encoding kept), when it differs from ``route``: forwarded as is."""
    client_session: ClientSession | None = None
    """The session the client names itself (``client_sessions``: Claude Code's, Codex's headers)."""
    side_shape: bool = False
    """No tools offered: what a side call of a client session looks like (``client_sessions``)."""
    structured: bool = False
    """A structured (JSON schema) answer asked for."""


def read_request(route: str, query: str, headers: Mapping[str, str], raw: bytes, provider: Provider, *,
                 upstream_path: str | None = None, resolve: Callable[[Any], Any] | None = None) -> ParsedRequest:
    """Parse a model request (``headers`` as ``clean_headers`` made them; ``upstream_path``: the path as sent,
    when it is not ``route``; ``resolve`` gives the body the conversation is read from: ``item_references``,
    earlier output items named by id, in their place)."""
    body, parse_error = parse_body(raw)
    is_object = isinstance(body, dict)
    return ParsedRequest(
        provider=provider,
        route=route,
        query=clean_text(query),
        headers=headers,
        raw=raw,
        body=body,
        parse_error=parse_error,
        key=request_key(route, body, raw),
        stream=provider.request_stream(body) if is_object else False,
        continuation=provider.request_continuation(body) if is_object else NOT_CONTINUED,
        conversation=derive_conversation(provider, resolve(body) if resolve is not None else body, raw),
        session=headers.get(SESSION_HEADER) or None,
        retry_count=retry_count(headers),
        upstream_path=upstream_path if upstream_path and upstream_path != route else None,
        client_session=client_session(headers, body),
        side_shape=not offers_tools(body),
        structured=asks_structured_output(body),
    )


def parse_body(raw: bytes) -> tuple[Any, str | None]:
    """The body parsed, and why it is not a JSON object when it is not (the model call's parse flag)."""
    if not raw:
        return None, "empty body"
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return None, str(exc)
    if not isinstance(body, dict):
        return body, f"not a JSON object: {type(body).__name__}"
    return body, None


def clean_text(value: str) -> str:
    """``value`` with lone surrogates (bytes that were not UTF-8) replaced by U+FFFD."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return value


def clean_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers with lower-case names and clean values (the last of repeated names wins, as before)."""
    lowered = {name.lower(): value for name, value in headers}
    if "".join(lowered).isascii() and "".join(lowered.values()).isascii():
        return lowered  # nearly always: nothing to mend
    return {clean_text(name): clean_text(value) for name, value in lowered.items()}
