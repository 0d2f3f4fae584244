"""Which headers the proxy forwards, which it keeps in the trace, and which are secrets.

Hop-by-hop headers (RFC 9110 section 7.6.1) are not forwarded; neither is ``x-tracekit-session``, which
only names the trace. Secret request headers are forwarded upstream (the agent's key is the upstream's
key) but their values are registered with the redactor and never written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from multidict import CIMultiDict, CIMultiDictProxy

from tracekit.constants import SESSION_HEADER
from tracekit.proxy.request_secrets import SecretSink
from tracekit.redact import REPLACEMENT, is_secret_header

RETRY_COUNT_HEADER = "x-stainless-retry-count"

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te",
    "trailer", "trailers", "transfer-encoding", "upgrade",
})  # fmt: skip
#: Request headers the proxy never forwards (aiohttp sets host and length itself).
_NOT_FORWARDED_REQUEST = HOP_BY_HOP | {"host", "content-length", SESSION_HEADER}
#: Response headers the proxy never forwards (the body it sends is decoded and re-framed).
_NOT_FORWARDED_RESPONSE = HOP_BY_HOP | {"content-length", "content-encoding", "date", "server"}
#: Response headers worth keeping in the trace (replay gives them back).
#: (AWS names an error only in ``x-amzn-ErrorType``: the SDKs decide on retrying from it.)
KEPT_RESPONSE_HEADERS = frozenset({
    "content-type", "retry-after", "retry-after-ms", "x-should-retry", "request-id", "x-request-id",
    "x-amzn-errortype", "x-amzn-requestid",
})  # fmt: skip


def upstream_request_headers(headers: Mapping[str, str], redactor: SecretSink) -> CIMultiDict[str]:
    """The headers to send upstream; registers secret values with ``redactor`` on the way."""
    forwarded: CIMultiDict[str] = CIMultiDict()
    # Headers the Connection header names are hop-by-hop too (RFC 9110, section 7.6.1).
    named = {token.strip().lower() for token in headers.get("connection", headers.get("Connection", "")).split(",")}
    for name, value in headers.items():
        lower = name.lower()
        if lower in _NOT_FORWARDED_REQUEST or lower in named:
            continue
        if is_secret_header(lower):
            redactor.add_secret(value)
        forwarded.add(name, value)
    return forwarded


def register_secrets(headers: Mapping[str, str] | Iterable[tuple[str, str]], redactor: SecretSink) -> None:
    """Register the values of secret headers (replay mode forwards nothing but still never writes them).
    Given the request's own headers (a multidict's ``items()``), every value of a repeated header counts."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    for name, value in items:
        if is_secret_header(name):
            redactor.add_secret(value)


def client_response_headers(headers: CIMultiDictProxy[str] | Mapping[str, str]) -> CIMultiDict[str]:
    """The upstream response headers to pass on to the client."""
    passed: CIMultiDict[str] = CIMultiDict()
    for name, value in headers.items():
        if name.lower() not in _NOT_FORWARDED_RESPONSE:
            passed.add(name, value)
    return passed


def kept_response_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The response headers recorded in the trace (lower-case names)."""
    return {name.lower(): value for name, value in headers if name.lower() in KEPT_RESPONSE_HEADERS}


def recorded_request_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The request headers an ``http_exchange`` record keeps: not hop-by-hop, secret values replaced."""
    return {name: REPLACEMENT if is_secret_header(name) else value
            for name, value in headers.items() if name not in _NOT_FORWARDED_REQUEST}  # fmt: skip


def recorded_response_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The response headers an ``http_exchange`` record keeps (and replay gives back)."""
    return {name.lower(): (REPLACEMENT if is_secret_header(name) else value)
            for name, value in headers if name.lower() not in _NOT_FORWARDED_RESPONSE}  # fmt: skip


def retry_count(headers: Mapping[str, str]) -> int | None:
    """The SDK's ``x-stainless-retry-count`` (None when absent or not a number)."""
    value = headers.get(RETRY_COUNT_HEADER)
    if value is None:  # (most clients send none: no exception raised per request)
        return None
    try:
        return max(0, int(value))
    except ValueError:
        return None
