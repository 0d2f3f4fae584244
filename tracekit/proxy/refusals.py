"""The answers the proxy gives on its own, without asking upstream: an unknown route (404) and a body over
the size limit (413), each in the error shape of the API the client speaks, with ``x-should-retry: false``.

The shape is chosen by route first (the OpenAI API's paths), then by headers: ``anthropic-version`` or
``x-api-key`` mean the Anthropic SDK, any other ``authorization`` means an OpenAI-compatible client.
Without either, the answer is Anthropic-shaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web

from tracekit.providers import PROVIDERS
from tracekit.providers.base import Provider

#: Anthropic documents 32 MB as the Messages API's request size limit; larger bodies get a 413 from the proxy.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024

#: Paths only the OpenAI API has (``/v1/complete`` is Anthropic's legacy route, not one of these).
_OPENAI_PATHS = ("/v1/chat/", "/v1/completions", "/v1/embeddings", "/v1/responses", "/v1/moderations",
                 "/v1/images/", "/v1/audio/", "/v1/fine_tuning/", "/v1/assistants", "/v1/threads",
                 "/v1/vector_stores")  # fmt: skip
_ANTHROPIC_HEADERS = ("anthropic-version", "x-api-key")


def provider_for_request(path: str, headers: Mapping[str, str]) -> Provider:
    """The provider whose error shape a client sending this request understands (see the module docstring)."""
    if path.startswith(_OPENAI_PATHS) or path == "/v1/chat":
        return PROVIDERS["openai"]
    if any(name in headers for name in _ANTHROPIC_HEADERS):
        return PROVIDERS["anthropic"]
    if "authorization" in headers:
        return PROVIDERS["openai"]
    return PROVIDERS["anthropic"]


def error_response(provider: Provider, status: int, message: str, code: str | None = None) -> web.Response:
    """A provider-shaped error that the SDKs do not retry (OpenAI bodies get ``code`` when given)."""
    body: dict[str, Any] = provider.error_body(status, message)
    if code is not None and provider.NAME == "openai":
        body["error"]["code"] = code
    return web.json_response(body, status=status, headers={"x-should-retry": "false"})


def no_route(request: web.Request) -> web.Response:
    """404: nothing is served at this method and path."""
    provider = provider_for_request(request.path, request.headers)
    return error_response(provider, 404, f"tracekit proxy: no route {request.method} {request.path}")


def too_large(request: web.Request, provider: Provider | None, size: int | None, limit: int) -> web.Response:
    """413: the body is larger than ``limit`` bytes (``size`` from Content-Length; None when it was chunked)."""
    provider = provider or provider_for_request(request.path, request.headers)
    size_text = f"{size} bytes" if size is not None else f"more than {limit} bytes (chunked)"
    message = (f"tracekit proxy: the request body of {size_text} exceeds the proxy's limit of {limit} bytes "
               "(--max-body-bytes)")  # fmt: skip
    return error_response(provider, 413, message, code="request_too_large")
