"""Wire formats of model APIs, each a module with the same few functions (see ``base.Provider``).

``anthropic`` serves ``POST /v1/messages``, ``openai`` serves ``POST /v1/chat/completions``,
``openai_responses`` serves ``POST /v1/responses``.

Example::

    from tracekit.providers import get_provider, provider_for_path

    provider = provider_for_path("/v1/chat/completions")   # the openai module
    body = provider.assemble_stream(parse_sse(sse_bytes))
"""

from __future__ import annotations

from tracekit.providers import anthropic, openai, openai_responses
from tracekit.providers.base import Provider, StreamAssembler
from tracekit.providers.sse import (
    ServerSentEvent,
    SSEParser,
    encode_event,
    encode_json_event,
    iter_sse,
    parse_sse,
)

PROVIDERS: dict[str, Provider] = {
    anthropic.NAME: anthropic,
    openai.NAME: openai,
    openai_responses.NAME: openai_responses,
}
"""Every provider by name."""


def get_provider(name: str) -> Provider:
    """The provider called ``name`` ('anthropic', 'openai', 'openai_responses'); ``KeyError`` naming the known
    ones otherwise."""
    try:
        return PROVIDERS[name]
    except KeyError:
        raise KeyError(f"unknown provider {name!r}; known: {', '.join(sorted(PROVIDERS))}") from None


def provider_for_path(path: str) -> Provider | None:
    """The provider serving a request path (query string and a trailing slash ignored), or None."""
    route = path.split("?", 1)[0].rstrip("/")
    for provider in PROVIDERS.values():
        if route == provider.ROUTE or route.endswith(provider.ROUTE):
            return provider
    return None


__all__ = [
    "PROVIDERS",
    "Provider",
    "SSEParser",
    "ServerSentEvent",
    "StreamAssembler",
    "anthropic",
    "encode_event",
    "encode_json_event",
    "get_provider",
    "iter_sse",
    "openai",
    "openai_responses",
    "parse_sse",
    "provider_for_path",
]
