"""Secrets a request carries outside its headers: API keys in the query string (``?key=``, as Google's APIs
and some gateways take them) and request-body fields configured as secret (``--redact-field``).

Their values are registered with the redactor as the request arrives, before anything of it is written,
and the request is forwarded unchanged (the upstream needs them). Header secrets are in ``headers``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol
from urllib.parse import quote

from tracekit.redact import Redactor


class SecretSink(Protocol):
    """Where secrets are registered: a ``Redactor``, or a ``LearntSecrets`` in front of one."""

    def add_secret(self, value: str) -> None:
        """Register one secret value."""


class LearntSecrets:
    """The secrets the proxy registers, in front of its redactor: knows when one is new, so that the files
    written before it was learnt can be scrubbed again at once (``Recorder.rescrub``).

    Example::

        learnt = LearntSecrets(redactor)
        register_secrets(headers, learnt)
        new = learnt.take_new()
        if new:
            await recorder.rescrub(new)
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._seen: set[str] = set()
        self._new: list[str] = []

    def add_secret(self, value: str) -> None:
        """Register ``value`` with the redactor (once) and note that it is new."""
        if value in self._seen:
            return
        self._seen.add(value)
        if not self.redactor.knows(value):
            self.redactor.add_secret(value)
            self._new.append(value)

    def take_new(self) -> list[str]:
        """The secrets learnt since the last call."""
        new, self._new = self._new, []
        return new

#: Query parameters whose values are secrets (names compared in lower case).
SECRET_QUERY_PARAMETERS = frozenset({"key", "api_key", "api-key", "apikey", "access_token", "token"})


def register_query_secrets(query: Iterable[tuple[str, str]], redactor: SecretSink) -> None:
    """Register the values of secret query parameters (decoded, and as they appear percent-encoded)."""
    for name, value in query:
        if name.lower() in SECRET_QUERY_PARAMETERS and value:
            redactor.add_secret(value)
            encoded = quote(value, safe="")
            if encoded != value:
                redactor.add_secret(encoded)


class SecretFields:
    """Dotted paths into a request body (``metadata.user_id``, ``messages.0.content``) whose values are secrets.

    A path part that is a number indexes a list. A value that is an object or a list makes every string and
    number inside it a secret. A path the body does not have is skipped.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = [tuple(path.split(".")) for path in paths if path]

    def __bool__(self) -> bool:
        return bool(self.paths)

    def register(self, body: Mapping[str, Any], redactor: SecretSink) -> None:
        """Register the values ``body`` holds at the configured paths."""
        for path in self.paths:
            value: Any = body
            for part in path:
                value = _child(value, part)
                if value is None:
                    break
            else:
                for secret in _scalars(value):
                    redactor.add_secret(secret)


def _child(value: Any, part: str) -> Any:
    if isinstance(value, dict):
        return value.get(part)
    if isinstance(value, list) and part.isdigit() and int(part) < len(value):
        return value[int(part)]
    return None


def _scalars(value: Any) -> list[str]:
    """The strings and numbers in ``value`` as text (booleans and null are no secrets)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [text for item in value for text in _scalars(item)]
    return []
