"""What counts as a secret, and every form a secret can take once a JSON writer has written it.

A JSON writer may escape any character of a string: ``/`` as ``\\/`` (PHP, some Java writers), characters
outside ASCII as ``\\uXXXX`` (Python's ``json.dumps`` by default, ``ensure_ascii``), ``<``, ``>`` and ``&`` as
``\\u003c`` ... (Go's ``encoding/json``, per its documentation of ``HTMLEscape``), quotes and backslashes as
``\\"`` and ``\\\\`` (every writer, RFC 8259 section 7), with hex digits in either case. ``forms`` gives each
of these spellings of a secret, so that the redactor finds a registered key however the upstream wrote it.

Secret header names (``is_secret_header``): the vendors' key headers (Anthropic ``x-api-key``, Azure
``api-key`` and API Management's ``Ocp-Apim-Subscription-Key``, Gemini ``x-goog-api-key``, AWS SigV4
``Authorization`` and ``X-Amz-Security-Token``) and any header whose name says it carries a key, token,
secret, password, signature or credential.

The recorder's own environment (``environment_secrets``): the values of variables whose names end in one of
``SECRET_ENV_SUFFIXES`` (``ANTHROPIC_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``GITHUB_TOKEN``, ``AZURE_CLIENT_SECRET``, ``PGPASSWORD`` ...): an agent that pastes one into a tool result
never gets it on disk.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping

#: Request headers whose values are secrets, besides the names ``is_secret_header`` recognizes by their words.
SECRET_HEADERS = frozenset({
    "x-api-key", "authorization", "cookie", "set-cookie", "proxy-authorization", "api-key", "x-goog-api-key",
    "ocp-apim-subscription-key", "x-amz-security-token", "x-functions-key",
})  # fmt: skip
_SECRET_HEADER_WORDS = ("api-key", "apikey", "api_key", "token", "secret", "password", "subscription-key",
                        "credential", "signature", "auth")  # fmt: skip

#: Environment variables whose values are secrets, by the end of their name (compared in upper case).
SECRET_ENV_SUFFIXES = ("_API_KEY", "_APIKEY", "_AUTH_TOKEN", "_ACCESS_TOKEN", "_SESSION_TOKEN", "_TOKEN",
                       "_SECRET", "_SECRET_KEY", "_SECRET_ACCESS_KEY", "_CLIENT_SECRET", "PASSWORD")  # fmt: skip

#: Shorter values are never registered: they would redact ordinary words.
MIN_SECRET_LENGTH = 8


@functools.lru_cache(maxsize=4096)  # a client sends the same few names with every request
def is_secret_header(name: str) -> bool:
    """Whether a header (any case) carries a secret."""
    lower = name.lower()
    return lower in SECRET_HEADERS or any(word in lower for word in _SECRET_HEADER_WORDS)


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of the secret variables of ``environ`` (see the module docstring)."""
    return [value for name, value in environ.items()
            if name.upper().endswith(SECRET_ENV_SUFFIXES) and len(value.strip()) >= MIN_SECRET_LENGTH]  # fmt: skip


def secret_parts(value: str) -> list[str]:
    """A header value and the parts of it that are secrets on their own: ``Bearer abc`` gives ``Bearer abc``
    and ``abc``; a SigV4 ``AWS4-HMAC-SHA256 Credential=AKIA.../..., Signature=f00d...`` also gives each
    parameter's value, and the access key id alone."""
    value = value.strip()
    parts = [value]
    if " " in value:
        rest = value.split(" ", 1)[1].strip()
        parts.append(rest)
        for parameter in re.split(r",\s*", rest):
            name, equals, parameter_value = parameter.partition("=")
            if equals and name.isalnum():
                parts.append(parameter_value.strip())
                if name == "Credential":  # ``AKIA.../20260101/us-east-1/bedrock/aws4_request``: the key id alone
                    parts.append(parameter_value.split("/", 1)[0].strip())
    return [part for part in parts if len(part) >= MIN_SECRET_LENGTH]


def _escape_char(char: str, upper: bool) -> str:
    code = ord(char)
    form = "\\u{:04X}" if upper else "\\u{:04x}"
    if code > 0xFFFF:  # a surrogate pair
        code -= 0x10000
        return form.format(0xD800 + (code >> 10)) + form.format(0xDC00 + (code & 0x3FF))
    return form.format(code)


def _writer(escaped: Callable[[str], bool], slash: str, upper: bool) -> Callable[[str], str]:
    """A JSON string writer that escapes what ``escaped`` says as \\uXXXX, and writes ``/`` as ``slash``."""

    def write(secret: str) -> str:
        out = []
        for char in secret:
            if char == "/" and not escaped(char):
                out.append(slash)
            elif escaped(char):
                out.append(_escape_char(char, upper))
            else:
                out.append(json.dumps(char, ensure_ascii=False)[1:-1])  # the minimal escapes (", \, controls)
        return "".join(out)

    return write


def _never(char: str) -> bool:
    return False


def _beyond_ascii(char: str) -> bool:
    return not char.isascii()


def _html(char: str) -> bool:
    return char in "<>&\u2028\u2029"


def _html_or_beyond_ascii(char: str) -> bool:
    return not char.isascii() or char in "<>&\u2028\u2029"


def _not_alphanumeric(char: str) -> bool:
    return not (char.isascii() and char.isalnum())


_WRITERS = [_writer(escaped, slash, upper)
            for escaped in (_never, _beyond_ascii, _html, _html_or_beyond_ascii, _not_alphanumeric)
            for slash in ("/", "\\/", "\\u002f", "\\u002F") for upper in (False, True)]  # fmt: skip


def forms(secret: str) -> set[str]:
    """Every spelling of ``secret`` a JSON writer can produce (see the module docstring), itself included."""
    spellings = {secret}
    spellings.update(write(secret) for write in _WRITERS)
    return spellings


def all_forms(secrets: Iterable[str]) -> set[str]:
    """``forms`` of each secret."""
    return {form for secret in secrets for form in forms(secret)}
