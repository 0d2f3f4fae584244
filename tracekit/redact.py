"""The one sanitizer every write path goes through.

Trace files, reports, logs and exports are written through ``Redactor.redact_bytes`` (or
``redact_text``): API keys and configured secrets are replaced by ``[REDACTED]`` before a byte reaches
disk. It works on the serialized text, so it catches a secret wherever it hides (a header someone
logged, a key pasted into a prompt, a query parameter) and the replacement never breaks JSON: the
patterns stop at quotes, backslashes and whitespace.

Two kinds of secrets:
- patterns of well-known key formats (Anthropic ``sk-ant-...``, OpenAI ``sk-...``, bearer tokens), and
- exact values registered at run time: the proxy registers every ``x-api-key`` / ``authorization`` /
  ``cookie`` value it sees, and the ``TRACEKIT_REDACT`` environment variable or ``--redact`` options add
  literal strings or ``re:`` regular expressions.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from typing import NamedTuple

from tracekit.errors import TracekitError

REPLACEMENT = "[REDACTED]"

# Key formats: Anthropic keys start "sk-ant-", OpenAI keys "sk-" / "sk-proj-" (per their docs).
DEFAULT_PATTERNS: tuple[str, ...] = (
    r"sk-ant-[A-Za-z0-9_\-]{8,}",
    r"sk-(?:proj-)?[A-Za-z0-9_\-]{16,}",
    r"(?i:(?<=bearer ))[A-Za-z0-9._~+/\-]{8,}=*",
)

#: Text that each default pattern needs in order to match. Text containing none of these (nor a
#: registered secret) is returned without running the regular expression: most of what tracekit writes.
_DEFAULT_NEEDLES = ("sk-", "earer ", "EARER ")

#: Request headers whose values are secrets: never written, and registered as secrets when seen.
SECRET_HEADERS = frozenset({"x-api-key", "authorization", "cookie", "set-cookie", "proxy-authorization",
                            "api-key", "x-goog-api-key"})


class Redactor:
    """Replaces secrets in text and bytes. Thread-safe; secrets can be added while running."""

    def __init__(self, patterns: Iterable[str] = DEFAULT_PATTERNS, secrets: Iterable[str] = ()) -> None:
        self._patterns = list(patterns)
        self._secrets: set[str] = set()
        self._lock = threading.Lock()
        self._compiled: _Compiled | None = None
        for secret in secrets:
            self.add_secret(secret)

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
        for part in _secret_parts(value):
            if len(part) >= 8 and part not in self._secrets:
                with self._lock:
                    self._secrets.add(part)
                    self._compiled = None

    def redact_text(self, text: str) -> str:
        """``text`` with every secret replaced."""
        compiled = self._compile()
        if compiled.text_needles is not None and not any(n in text for n in compiled.text_needles):
            return text
        return compiled.text.sub(REPLACEMENT, text)

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` (UTF-8) with every secret replaced."""
        compiled = self._compile()
        if compiled.byte_needles is not None and not any(n in data for n in compiled.byte_needles):
            return data
        return compiled.binary.sub(_REPLACEMENT_BYTES, data)

    def _compile(self) -> _Compiled:
        compiled = self._compiled
        if compiled is None:
            with self._lock:
                alternatives = [re.escape(s) for s in sorted(self._secrets, key=len, reverse=True)]
                alternatives += [f"(?:{p})" for p in self._patterns]
                source = "|".join(alternatives) or r"(?!x)x"
                needles: tuple[str, ...] | None = None
                if all(p in DEFAULT_PATTERNS for p in self._patterns):  # a custom regex: always scan
                    needles = (*_DEFAULT_NEEDLES, *self._secrets) if self._patterns else tuple(self._secrets)
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
    text_needles: tuple[str, ...] | None
    byte_needles: tuple[bytes, ...] | None


_REPLACEMENT_BYTES = REPLACEMENT.encode()


def _secret_parts(value: str) -> list[str]:
    """A header value and its token part (``Bearer abc`` -> ``Bearer abc``, ``abc``)."""
    value = value.strip()
    parts = [value]
    if " " in value:
        parts.append(value.split(" ", 1)[1].strip())
    return parts


_default: Redactor | None = None


def default_redactor() -> Redactor:
    """The process-wide redactor: default patterns, ``TRACEKIT_REDACT`` (comma-separated) and the
    values of ``*_API_KEY`` / ``*_AUTH_TOKEN`` environment variables."""
    global _default
    if _default is None:
        _default = Redactor()
        for item in os.environ.get("TRACEKIT_REDACT", "").split(","):
            if item.strip():
                _default.add_secret(item.strip())
        for name, value in os.environ.items():
            if name.endswith(("_API_KEY", "_AUTH_TOKEN")) and value:
                _default.add_secret(value)
    return _default
