"""The session ids that agent clients send on their own, and the requests they make beside the conversation.

A request whose client names its session joins that session's trace, as ``x-tracekit-session`` does (which
wins when both are there). The ids read, in this order (each client's source cited):

- ``x-claude-code-session-id``: Claude Code 2.x sends it on every request of a session (``claude`` is closed
  source; in the binary of ``@anthropic-ai/claude-code-linux-x64`` 2.1.197 its request headers are
  ``"X-Claude-Code-Session-Id": <session id>`` and, for a subagent, ``"x-claude-code-agent-id"``: a subagent is an
  agent of its own, so its requests form a trace of their own, named ``<session id>.agent-<agent id>``);
- ``thread-id``, then ``session-id``: the Codex CLI (``openai/codex``, ``codex-rs/codex-api/src/requests/headers.rs``,
  ``build_session_headers``). The thread first: a thread Codex spawns keeps the session id but has a thread
  of its own (``x-codex-parent-thread-id`` names its parent), and is an agent of its own, with a trace of its
  own; for the root thread both are the same id. Older releases sent ``session_id``
  (``build_conversation_headers``), and ``conversation_id`` before that;
- in an Anthropic body, the ``session_id`` inside ``metadata.user_id``: Claude Code sends it as a JSON string
  (``{"device_id": ..., "account_uuid": ..., "session_id": "<uuid>"}``, ``user_id: JSON.stringify(...)`` in the
  same 2.1.197 binary) or as
  ``user_<hash>_account_<uuid or nothing>__session_<uuid>`` (1.x);
- in a Responses body, Codex's ``client_metadata.thread_id`` (else ``session_id``).

A side call is a request of the session that is no turn of its conversation: Claude Code's title or summary
call (a small model, no tools, a structured output) and its quota check (``"content": "quota"``, ``max_tokens``
1, no tools: ``source: "quota_check"`` in the same binary), Codex's compaction (``x-openai-subagent: compact``; the
values are ``subagent_header`` in the same ``headers.rs``). ``is_side_call`` decides it from the request and the
session (``tracekit.proxy.sessions``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CLAUDE_CODE_HEADER = "x-claude-code-session-id"
#: Request headers that name a client's session, in the order they are read.
SESSION_HEADERS = (CLAUDE_CODE_HEADER, "thread-id", "session-id", "session_id", "conversation_id")
#: Claude Code's header naming the subagent a request serves.
AGENT_HEADER = "x-claude-code-agent-id"
#: Codex's header naming the internal task a request serves; the values below are side calls.
SUBAGENT_HEADER = "x-openai-subagent"
SIDE_SUBAGENTS = frozenset({"compact", "memory_consolidation"})
#: The longest session id read (a longer value is no session id).
MAX_ID = 256

_LEGACY_USER_ID = re.compile(r"^user_[0-9A-Za-z]*_account_[0-9A-Za-z-]*_session_([0-9A-Za-z-]{8,})$")


@dataclass(frozen=True, slots=True)
class ClientSession:
    """The session a client named in its request."""

    id: str
    source: str
    """Where it was read: the header's name, ``metadata.user_id`` or ``client_metadata.session_id``."""
    side: str | None = None
    """The client's own word that the request is a side call (``x-openai-subagent: compact``), else None."""
    tools_every_turn: bool = False
    """The client offers its tools on every turn of its conversation (Claude Code): a request of its session
    that offers none is a side call (its title call, its ``quota`` check: ``max_tokens`` 1, no tools)."""


def client_session(headers: Mapping[str, str], body: Any) -> ClientSession | None:
    """The client session a request names (``headers`` with lower-case names), or None."""
    subagent = headers.get(SUBAGENT_HEADER)
    side = subagent if subagent in SIDE_SUBAGENTS else None
    for name in SESSION_HEADERS:
        value = _usable(headers.get(name))
        if value is not None:
            agent = _usable(headers.get(AGENT_HEADER))
            claude = name == CLAUDE_CODE_HEADER
            return ClientSession(f"{value}.agent-{agent}" if agent else value, name, side, tools_every_turn=claude)
    if isinstance(body, dict):
        metadata = body.get("metadata")
        if isinstance(metadata, dict):
            found = user_id_session(metadata.get("user_id"))
            if found is not None:
                return ClientSession(found, "metadata.user_id", side, tools_every_turn=True)
        client_metadata = body.get("client_metadata")
        if isinstance(client_metadata, dict):
            for key in ("thread_id", "session_id"):
                value = _usable(client_metadata.get(key))
                if value is not None:
                    return ClientSession(value, f"client_metadata.{key}", side)
    return None


def user_id_session(user_id: Any) -> str | None:
    """The session id inside Claude Code's ``metadata.user_id`` (either form), or None."""
    if not isinstance(user_id, str) or len(user_id) > 4 * MAX_ID:
        return None
    if user_id.startswith("{"):
        try:
            parsed = json.loads(user_id)
        except ValueError:
            return None
        return _usable(parsed.get("session_id")) if isinstance(parsed, dict) else None
    match = _LEGACY_USER_ID.match(user_id)
    return match.group(1) if match else None


def offers_tools(body: Any) -> bool:
    """Whether the request offers the model any tool (``tools`` in Anthropic, Chat Completions and Responses
    bodies, ``toolConfig.tools`` in Bedrock Converse)."""
    if not isinstance(body, dict):
        return False
    config = body.get("toolConfig")
    return bool(body.get("tools")) or (isinstance(config, dict) and bool(config.get("tools")))


def asks_structured_output(body: Any) -> bool:
    """Whether the request asks for a structured (JSON schema) answer: Anthropic's ``output_format`` (the
    ``structured-outputs`` beta) or ``output_config.format``, Chat Completions' ``response_format``, the
    Responses API's ``text.format``. (The body, not the beta header: a client may send the header on every
    request.)"""
    if not isinstance(body, dict):
        return False
    config = body.get("output_config")
    text = body.get("text")
    response_format = body.get("response_format")
    return bool(
        body.get("output_format")
        or (isinstance(config, dict) and config.get("format"))
        or (isinstance(response_format, dict) and response_format.get("type") in ("json_schema", "json_object"))
        or (isinstance(text, dict) and isinstance(text.get("format"), dict)
            and text["format"].get("type") in ("json_schema", "json_object"))
    )  # fmt: skip


def _usable(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if 0 < len(value) <= MAX_ID and value.isprintable() else None
