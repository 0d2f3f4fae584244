"""Which trace files may hold a secret learnt late, without reading them: an index of the words written.

A secret learnt after files were written (a key an agent pasted into a prompt before another request sent
it as a header) must be scrubbed from those files at once. Reading every file written so far for each new
secret makes a proxy that sees a new ``Authorization`` value per request do work that grows with everything
it recorded (issue 27: 385 of 1,500 requests in 240 s, latency 87 -> 1,124 ms). Instead, every batch of
bytes written to a file is split into words (runs of ASCII letters and digits, ``\\uXXXX`` escapes counting
as separators) and the file is noted under each word of 8 characters or more; a new secret is looked up by
its longest such word, and only the files noted under it are scrubbed: the cost per request is that of the
bytes it writes, whatever was written before.

A secret glued to other letters where it was written (``key=abc`` is fine, ``keyabc12345678`` is not), or
with no word of 8 characters, is not found this way: ``candidates`` then answers None (every live file), and
every file is scrubbed once more when the recorder closes in any case. A file's words are forgotten when its
session is closed (``forget``).
"""

from __future__ import annotations

import re
from collections.abc import Hashable

from tracekit.proxy.memory_release import compacted
from tracekit.redact import Redactor
from tracekit.redact.forms import secret_parts

_SEPARATORS = re.compile(rb"\\u[0-9A-Fa-f]{4}|[^A-Za-z0-9]+")
_WORD = re.compile(r"[A-Za-z0-9]{8,}")
MIN_WORD = 8
_ALNUM = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
#: Every byte that is not an ASCII letter or digit made a space: ``bytes.split()`` then gives the words.
_SPACED = bytes(byte if byte in _ALNUM else 0x20 for byte in range(256))


def written_words(data: bytes) -> set[int]:
    """Hashes of the words of ``data`` of ``MIN_WORD`` characters or more. Without a ``\\u`` in ``data``, the
    separators are exactly the runs of other bytes, and translating them to spaces splits in C at a fraction
    of the regular expression's cost (a quarter, on the proxy's records); with one, the expression decides."""
    if b"\\u" in data:
        return {hash(word) for word in _SEPARATORS.split(data) if len(word) >= MIN_WORD}
    return {hash(word) for word in data.translate(_SPACED).split() if len(word) >= MIN_WORD}


def anchor(secret: str) -> str | None:
    """The longest word of ``secret`` the index can find it by (None when it has none)."""
    words = _WORD.findall(secret)
    return max(words, key=len) if words else None


class WrittenTokens:
    """Files by the words written to them (see the module docstring).

    Example::

        tokens = WrittenTokens()
        tokens.note("a.jsonl", b'{"text":"my key tkform-abcdefgh12"}')
        tokens.candidates("tkform-abcdefgh12")     # {"a.jsonl"}
    """

    def __init__(self) -> None:
        self._holders: dict[int, set[Hashable]] = {}
        self._words: dict[Hashable, set[int]] = {}

    def note(self, owner: Hashable, data: bytes) -> None:
        """``data`` was written to ``owner``'s file."""
        words = written_words(data)
        known = self._words.setdefault(owner, set())
        for word in words - known:
            self._holders.setdefault(word, set()).add(owner)
        known |= words

    def candidates(self, secret: str) -> set[Hashable] | None:
        """The files that may hold ``secret`` (None: it cannot be looked up, any file may)."""
        found: set[Hashable] = set()
        for part in secret_parts(secret) or [secret]:
            word = anchor(part)
            if word is None:
                return None
            found |= self._holders.get(hash(word.encode()), set())
        return found

    def forget(self, owner: Hashable) -> None:
        """``owner``'s file is closed: drop its words."""
        for word in self._words.pop(owner, set()):
            holders = self._holders.get(word)
            if holders is not None:
                holders.discard(owner)
                if not holders:
                    del self._holders[word]

    def compact(self) -> None:
        """Give back the room of forgotten files (a dict keeps its largest size otherwise)."""
        self._holders = compacted(self._holders)
        self._words = compacted(self._words)


class IndexingRedactor(Redactor):
    """What one trace file is written through: the recorder's redactor, noting the words that reach the file.

    Only ``redact_bytes`` is used by the file writer; the rest is the recorder's redactor's."""

    def __init__(self, redactor: Redactor, tokens: WrittenTokens, owner: Hashable) -> None:
        # (no Redactor.__init__: this object holds no secrets of its own, it passes everything on)
        self._inner = redactor
        self._tokens = tokens
        self._owner = owner

    def add_secret(self, value: str) -> None:
        self._inner.add_secret(value)

    def redact_text(self, text: str) -> str:
        return self._inner.redact_text(text)

    def redact_bytes(self, data: bytes) -> bytes:
        cleaned = self._inner.redact_bytes(data)
        self._tokens.note(self._owner, cleaned)
        return cleaned
