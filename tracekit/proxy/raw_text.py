"""Wire bytes kept exactly in a JSON trace, and readable.

A trace line is UTF-8 JSON, but what a server or client sends need not be UTF-8: an SSE stream cut inside a
multi-byte character, a gateway's Latin-1 error page. Bytes that are valid UTF-8 are stored as their text
(the common case: the trace reads as before). Otherwise the text is escaped: every backslash is doubled,
and each byte that is not part of a UTF-8 character is written as ``\\xNN``; the record names the field in
``escaped``. Both forms stay plain text, so the redactor still finds a secret in them, at write time and
when a file is scrubbed again later.

Example::

    text, escaped = text_of(b"data: caf\\xc3")       # ('data: caf\\\\xc3', True)
    assert bytes_of(text, escaped) == b"data: caf\\xc3"
"""

from __future__ import annotations

import re

_ESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2})")


def text_of(data: bytes) -> tuple[str, bool]:
    """``data`` as text, and whether it had to be escaped (see the module docstring)."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace"), True


def bytes_of(text: str, escaped: bool) -> bytes:
    """The exact bytes ``text_of`` was given (``escaped`` as it returned)."""
    if not escaped:
        return text.encode("utf-8")
    out = bytearray()
    position = 0
    for match in _ESCAPE.finditer(text):
        out += text[position : match.start()].encode("utf-8")
        token = match.group(1)
        out += b"\\" if token == "\\" else bytes([int(token[1:], 16)])
        position = match.end()
    out += text[position:].encode("utf-8")
    return bytes(out)
