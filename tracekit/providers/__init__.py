"""Wire formats of model APIs: the one seam between tracekit and a model API's bytes (``base.Provider``).

``anthropic`` serves ``POST /v1/messages``, ``openai`` serves ``POST /v1/chat/completions``,
``openai_responses`` serves ``POST /v1/responses``; ``bedrock_converse`` and ``bedrock_invoke`` serve Amazon
Bedrock's ``POST /model/{modelId}/converse`` and ``/invoke`` (and their streams, AWS event streams:
``eventstream``); a new format subclasses ``ProviderBase`` and is
registered with ``@register_provider`` or the entry-point group ``tracekit.providers`` (``registry``).

Example::

    from tracekit.providers import get_provider, provider_for_path

    provider = provider_for_path("/v1/chat/completions")   # the openai module
    body = provider.assemble_stream(parse_sse(sse_bytes))
"""

from __future__ import annotations

from tracekit.providers import anthropic, openai, openai_responses
from tracekit.providers.base import Provider, StreamAssembler, ToolResultRef
from tracekit.providers.defaults import ProviderBase
from tracekit.providers.registry import (
    PROVIDERS,
    get_provider,
    load_installed,
    provider_for_path,
    register_provider,
    routes,
)
from tracekit.providers.sse import (
    ServerSentEvent,
    SSEParser,
    encode_event,
    encode_json_event,
    iter_sse,
    parse_sse,
)

__all__ = [
    "PROVIDERS",
    "Provider",
    "ProviderBase",
    "SSEParser",
    "ServerSentEvent",
    "StreamAssembler",
    "ToolResultRef",
    "anthropic",
    "encode_event",
    "encode_json_event",
    "get_provider",
    "iter_sse",
    "load_installed",
    "openai",
    "openai_responses",
    "parse_sse",
    "provider_for_path",
    "register_provider",
    "routes",
]
