"""The answers the proxy gives on its own, without asking upstream: an unknown route (404) and a body over
the size limit (413), each in the error shape of the API the client speaks, with ``x-should-retry: false``.

The shape is chosen by route first (each provider's ``API_PATHS``), then by headers (each provider's
``CLIENT_HEADERS``, asked in the order of ``PROVIDERS``: ``anthropic-version`` or ``x-api-key`` mean the
Anthropic SDK, any other ``authorization`` an OpenAI-compatible client). Without either, the answer takes the
first provider's shape (Anthropic's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web

from tracekit.providers import PROVIDERS
from tracekit.providers.base import Provider


def provider_for_request(path: str, headers: Mapping[str, str]) -> Provider:
    """The provider whose error shape a client sending this request understands (see the module docstring)."""
    providers = list(PROVIDERS.values())
    for provider in providers:
        if path.startswith(provider.API_PATHS):
            return provider
    for provider in providers:
        if any(name in headers for name in provider.CLIENT_HEADERS):
            return provider
    return providers[0]


def error_response(provider: Provider, status: int, message: str, code: str | None = None) -> web.Response:
    """A provider-shaped error that the SDKs do not retry (``code`` where the shape has one)."""
    body: dict[str, Any] = provider.error_body(status, message, code=code)
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
