"""The one sanitizer every write path goes through.

Trace files, reports, logs and exports are written through ``Redactor.redact_bytes`` (or
``redact_text``): API keys and configured secrets are replaced by ``[REDACTED]`` before a byte reaches
disk. It works on the serialized text, so it catches a secret wherever it hides (a header someone
logged, a key pasted into a prompt, a query parameter) and the replacement never breaks JSON: the
patterns stop at quotes, backslashes and whitespace.

Two kinds of secrets:
- patterns of well-known key formats (Anthropic ``sk-ant-...``, OpenAI ``sk-...``, bearer tokens), and
- exact values registered at run time: the proxy registers every value of every secret header it sees
  (``forms.is_secret_header``), the ``TRACEKIT_REDACT`` environment variable or ``--redact`` options add
  literal strings or ``re:`` regular expressions, and the recorder's own secret environment variables
  (``forms.environment_secrets``) are registered at start.

A registered secret is found in every spelling a JSON writer can give it (``\\/``, ``\\uXXXX``:
``forms``), however many secrets there are (``literals``: the cost of a scan does not grow with their
number). A secret a model streams in pieces is found in the joined text of the stream (``redact_stream``).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from typing import AnyStr, NamedTuple

from tracekit.errors import TracekitError
from tracekit.redact.forms import SECRET_HEADERS, all_forms, environment_secrets, is_secret_header, secret_parts
from tracekit.redact.literals import Literals

__all__ = ["DEFAULT_PATTERNS", "REPLACEMENT", "SECRET_HEADERS", "Redactor", "default_redactor", "is_secret_header"]

REPLACEMENT = "[REDACTED]"

# Key formats: Anthropic keys start "sk-ant-", OpenAI keys "sk-" / "sk-proj-" (per their docs).
DEFAULT_PATTERNS: tuple[str, ...] = (
    r"sk-ant-[A-Za-z0-9_\-]{8,}",
    r"sk-(?:proj-)?[A-Za-z0-9_\-]{16,}",
    r"(?i:(?<=bearer ))[A-Za-z0-9._~+/\-]{8,}=*",
)

#: Text that each default pattern needs in order to match. Text containing none of these is returned
#: without running the pattern: most of what tracekit writes.
_DEFAULT_NEEDLES = ("sk-", "earer ", "EARER ")

_REPLACEMENT_BYTES = REPLACEMENT.encode()


class Redactor:
    """Replaces secrets in text and bytes. Thread-safe; secrets can be added while running."""

    def __init__(self, patterns: Iterable[str] = DEFAULT_PATTERNS, secrets: Iterable[str] = ()) -> None:
        self._patterns = list(patterns)
        self._literals = Literals()
        self._lock = threading.Lock()
        self._compiled: _Compiled | None = None
        for secret in secrets:
            self.add_secret(secret)

    @property
    def secret_count(self) -> int:
        """How many literal spellings are registered (each secret counts once per spelling)."""
        return len(self._literals)

    def add_secret(self, value: str) -> None:
        """Register a literal secret (``re:`` prefix: a regular expression). Short values are ignored."""
        if value.startswith("re:"):
            try:
                re.compile(f"x|(?:{value[3:]})")
            except re.error as exc:
                raise TracekitError(
                    f"secret pattern {value!r} is not a usable regular expression ({exc}); "
                    "write flags scoped, e.g. (?i:token-[0-9]+)"
                ) from exc
            with self._lock:
                self._patterns.append(value[3:])
                self._compiled = None
            return
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # bytes that were not UTF-8 (a header value): as they are written
            value = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        parts = [part for part in secret_parts(value) if part not in self._literals]
        if parts:
            with self._lock:
                self._literals.add(all_forms(parts))

    def knows(self, value: str) -> bool:
        """Whether ``value`` is registered already (as a literal secret)."""
        return all(part in self._literals for part in secret_parts(value))

    def redact_text(self, text: str) -> str:
        """``text`` with every secret replaced."""
        compiled = self._compile()
        return _redacted(text, self._literals.spans(text), REPLACEMENT, compiled.needles, compiled.text)

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` (UTF-8) with every secret replaced."""
        compiled = self._compile()
        return _redacted(data, self._literals.byte_spans(data), _REPLACEMENT_BYTES, compiled.byte_needles,
                         compiled.binary)  # fmt: skip

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where secrets (registered and pattern-shaped) occur in ``text``, sorted, overlaps merged."""
        found = list(self._literals.spans(text))
        compiled = self._compile()
        if compiled.needles is None or any(n in text for n in compiled.needles):
            found += [match.span() for match in compiled.text.finditer(text) if match.end() > match.start()]
        found.sort()
        merged: list[tuple[int, int]] = []
        for start, end in found:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    def _compile(self) -> _Compiled:
        compiled = self._compiled
        if compiled is None:
            with self._lock:
                source = "|".join(f"(?:{p})" for p in self._patterns) or r"(?!x)x"
                needles: tuple[str, ...] | None = None
                if all(p in DEFAULT_PATTERNS for p in self._patterns):  # a custom regex: always scan
                    needles = _DEFAULT_NEEDLES if self._patterns else ()
                compiled = _Compiled(
                    re.compile(source),
                    re.compile(source.encode()),
                    needles,
                    tuple(n.encode() for n in needles) if needles is not None else None,
                )
                self._compiled = compiled
        return compiled


class _Compiled(NamedTuple):
    text: re.Pattern[str]
    binary: re.Pattern[bytes]
    needles: tuple[str, ...] | None
    byte_needles: tuple[bytes, ...] | None


def _redacted(
    value: AnyStr, literal_spans: list[tuple[int, int]], replacement: AnyStr, needles: tuple[AnyStr, ...] | None,
    pattern: re.Pattern[AnyStr],
) -> AnyStr:  # fmt: skip
    """``value`` with the registered secrets at ``literal_spans`` replaced, then every pattern-shaped one
    (the pattern is skipped when none of its ``needles`` occurs: most text holds no secret)."""
    if literal_spans:
        value = _replaced(value, literal_spans, replacement)
    if needles is not None and not any(needle in value for needle in needles):
        return value
    return pattern.sub(replacement, value)


def _replaced(value: AnyStr, spans: list[tuple[int, int]], replacement: AnyStr) -> AnyStr:
    pieces: list[AnyStr] = []
    position = 0
    for start, end in spans:
        pieces.append(value[position:start])
        pieces.append(replacement)
        position = end
    pieces.append(value[position:])
    return value[:0].join(pieces)


_default: Redactor | None = None


def default_redactor() -> Redactor:
    """The process-wide redactor: default patterns, ``TRACEKIT_REDACT`` (comma-separated) and the values of
    the recorder's secret environment variables (``forms.environment_secrets``: ``*_API_KEY``, ``*_TOKEN``,
    ``*_SECRET_ACCESS_KEY`` ...)."""
    global _default
    if _default is None:
        _default = Redactor()
        for item in os.environ.get("TRACEKIT_REDACT", "").split(","):
            if item.strip():
                _default.add_secret(item.strip())
        for value in environment_secrets(os.environ):
            _default.add_secret(value)
    return _default
