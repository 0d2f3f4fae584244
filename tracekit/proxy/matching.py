"""The replay ladder: how a request that matches no recording exactly may still be answered, and by what.

Replay tries three rungs, in order, and says which one answered (the ``x-tracekit-replay-match`` response
header, a log line, and ``tracekit replay``'s summary at exit):

1. ``exact``: the canonical key of the request (``tracekit.proxy.keys``).
2. ``volatile``: the key with volatile fields left out: the built-in rules of the clients that put per-run
   values in every request (below), plus the user's ``--ignore PATH`` patterns (and ``ignore:`` in
   ``replay.yaml`` beside the recordings).
3. ``session``: inside one live session that an earlier rung already tied to a recorded session, the next
   unanswered recorded model call of that session, when it has the same provider and model and the two
   requests are equal once the ``volatile`` fields are left out and generated-looking values in any text
   are masked (``masked``: UUIDs, prefixed ids, timestamps, hex runs, the token after ``ID:``). This is
   what lets a session whose tool outputs hold a random value (the Codex CLI's ``Chunk ID``) replay when
   it is otherwise the same, while a tool result with other words in it still misses.

A path pattern names fields of a request body: keys joined by dots, ``[*]`` for every item of a list,
``[N]`` for one item, ``*`` for every key; a leading ``$.`` (JSONPath) is allowed. Examples:
``client_metadata``, ``$.input[*].id``, ``metadata.*``, ``messages[0].content``.

vcrpy's ``match_on`` and custom matchers are the anchor (https://vcrpy.readthedocs.io/en/latest/advanced.html);
the ladder differs in needing no configuration for the clients it knows.

Built-in client rules are recognised by the request's own body, since a recording keeps no request
headers: a rule applies to a request that holds its marker field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tracekit.errors import ProxySetupError
from tracekit.proxy.keys import normalized_request

RUNGS = ("exact", "volatile", "session")
"""The rungs of the ladder, in the order they are tried."""

_TOKEN = re.compile(r"\[(\*|\d+)\]|([^.\[\]]+)")


@dataclass(frozen=True)
class PathPattern:
    """A parsed path pattern: each step a key, ``*`` (every key), ``[*]`` (every item) or an item index."""

    text: str
    steps: tuple[str | int, ...]

    @classmethod
    def parse(cls, text: str) -> PathPattern:
        """Parse ``text`` (see the module docstring); an empty or malformed pattern is a ``ProxySetupError``."""
        body = text.strip()
        if body.startswith("$."):
            body = body[2:]
        elif body == "$":
            body = ""
        steps: list[str | int] = []
        for part in body.split("."):
            if not part:
                raise ProxySetupError(f"--ignore {text!r}: an empty step (two dots, or a dot at an end)")
            matched = 0
            for token in _TOKEN.finditer(part):
                if token.start() != matched:
                    break
                index, key = token.group(1), token.group(2)
                steps.append(key if key is not None else ("[*]" if index == "*" else int(index)))
                matched = token.end()
            if matched != len(part):
                raise ProxySetupError(f"--ignore {text!r}: cannot read {part[matched:]!r} (use key.key, [*] or [N])")
        if not steps:
            raise ProxySetupError(f"--ignore {text!r}: the pattern names no field")
        return cls(text, tuple(steps))


@dataclass(frozen=True)
class ClientRule:
    """The volatile fields of one client, applied to requests that hold ``marker`` at their top level."""

    client: str
    marker: str
    patterns: tuple[PathPattern, ...]


def _rule(client: str, marker: str, *patterns: str) -> ClientRule:
    return ClientRule(client, marker, tuple(PathPattern.parse(pattern) for pattern in patterns))


# What each client puts in a request that changes on every run (seen in real recordings of the clients
# named; the Codex CLI 0.171 `codex exec` on the Responses API sends all of these, over HTTP and over its
# WebSocket, where each input item also carries ``internal_chat_message_metadata_passthrough``: a turn id and
# a creation time).
BUILTIN_RULES: tuple[ClientRule, ...] = (
    _rule("codex", "client_metadata", "client_metadata", "prompt_cache_key", "input[*].id",
          "input[*].internal_chat_message_metadata_passthrough"),
    _rule("openai-prompt-cache", "prompt_cache_key", "prompt_cache_key"),
    _rule("anthropic-metadata", "metadata", "metadata.session_id"),
)


def remove_paths(body: Any, patterns: Iterable[PathPattern]) -> Any:
    """``body`` with every field a pattern names removed (a copy where something changed; the input is
    never modified)."""
    for pattern in patterns:
        body = _remove(body, pattern.steps)
    return body


def _remove(value: Any, steps: Sequence[str | int]) -> Any:
    step, rest = steps[0], steps[1:]
    if step == "[*]" or isinstance(step, int):
        if not isinstance(value, list):
            return value
        every = range(len(value))
        positions = every if step == "[*]" else [step] if isinstance(step, int) and 0 <= step < len(value) else []
        changed = list(value)
        for position in positions:
            # Removing a list item would shift the others: the count stays, the item becomes null.
            changed[position] = _remove(value[position], rest) if rest else None
        return changed
    if not isinstance(value, dict):
        return value
    keys = list(value) if step == "*" else [step] if step in value else []
    if not keys:
        return value
    changed_dict = dict(value)
    for key in keys:
        if rest:
            changed_dict[key] = _remove(value[key], rest)
        else:
            del changed_dict[key]
    return changed_dict


@dataclass(frozen=True)
class MatchRules:
    """What the ``volatile`` rung leaves out: the built-in client rules and the user's patterns."""

    ignore: tuple[PathPattern, ...] = ()
    builtin: bool = True

    @classmethod
    def from_texts(cls, patterns: Iterable[str], *, builtin: bool = True) -> MatchRules:
        """Rules from ``--ignore`` texts (each parsed; a bad one is a ``ProxySetupError`` naming it)."""
        return cls(tuple(PathPattern.parse(text) for text in patterns), builtin)

    def volatile_body(self, body: Any) -> Any:
        """``body`` as the ``volatile`` rung compares it."""
        if not isinstance(body, dict):
            return body
        patterns: list[PathPattern] = list(self.ignore)
        if self.builtin:
            for rule in BUILTIN_RULES:
                if rule.marker in body:
                    patterns.extend(rule.patterns)
        kept = remove_paths(normalized_request(body), patterns)
        # A field left empty by what was removed is left out too, as ``normalized_request`` does.
        return {key: value for key, value in kept.items() if value != {} or body.get(key) == {}}


#: Values that look generated rather than meant, masked before the ``session`` rung compares two requests:
#: UUIDs, prefixed object ids (``msg_...``, ``call_...``), timestamps, runs of hex digits holding both a digit
#: and a letter, the token after an ``ID:`` label (the Codex CLI's ``Chunk ID: 3f9a1c``), and a measured
#: duration with a fraction (its ``Wall time: 0.0284 seconds``).
_VOLATILE_TEXT = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|\b(?:msg|call|fc|rs|resp|req|run|toolu|chatcmpl|item)_[A-Za-z0-9]{6,}\b"
    r"|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b"
    r"|(?<=\bID: )[A-Za-z0-9]{4,}\b"
    r"|\b\d+\.\d+(?= ?(?:s|ms|sec|secs|seconds?|milliseconds?)\b)",
    re.IGNORECASE,
)


def masked(value: Any) -> Any:
    """``value`` with every string's generated-looking parts replaced by ``*`` (what the ``session`` rung
    compares: two requests that differ only there are the same turn of the same session).

    >>> masked({"output": "Chunk ID: 3f9a1c\\nhello", "id": "msg_7d1e2f3a4b"})
    {'output': 'Chunk ID: *\\nhello', 'id': '*'}
    """
    if isinstance(value, str):
        return _VOLATILE_TEXT.sub("*", value)
    if isinstance(value, dict):
        return {key: masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [masked(item) for item in value]
    return value


__all__ = [
    "BUILTIN_RULES",
    "RUNGS",
    "ClientRule",
    "MatchRules",
    "PathPattern",
    "masked",
    "remove_paths",
]
