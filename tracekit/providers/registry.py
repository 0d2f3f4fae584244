"""Every wire format by name: the built-in ones, those registered with ``@register_provider`` and those
installed packages offer (entry-point group ``tracekit.providers``), added on first need.

A provider is any object with the members of ``base.Provider``: a module (the built-in ones), or an
instance of a ``ProviderBase`` subclass (a class is registered as its instance). Adding a wire format is a
provider and one registration: the proxy serves its ``ROUTE``, records and replays it, and applies the
intercepts of a case to its tool results; nothing outside ``tracekit/providers`` names a format.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any, TypeVar

from tracekit.entry_points import PROVIDERS as GROUP
from tracekit.entry_points import load
from tracekit.errors import PluginError
from tracekit.providers import anthropic, openai, openai_responses
from tracekit.providers.base import Provider
from tracekit.providers.bedrock_converse import BedrockConverse
from tracekit.providers.bedrock_invoke import BedrockInvoke

PROVIDERS: dict[str, Provider] = {
    anthropic.NAME: anthropic,
    openai.NAME: openai,
    openai_responses.NAME: openai_responses,
}
"""Every provider by name (the installed ones once ``load_installed`` ran)."""

_Registered = TypeVar("_Registered")
_lock = threading.Lock()
_installed = False


def register_provider(provider: _Registered) -> _Registered:
    """Register a provider (an object, or a ``ProviderBase`` subclass, registered as its instance) under
    its ``NAME``; a later one of the same name replaces the earlier.

    >>> from tracekit.providers import PROVIDERS, ProviderBase, register_provider
    >>> @register_provider
    ... class Plain(ProviderBase):
    ...     "One prompt in, one text out: {model, prompt} -> {model, text}."
    ...     NAME, ROUTE = "plain", "/v1/plain"
    ...     def request_conversation(self, body):
    ...         return None, [{"role": "user", "content": body.get("prompt", "")}]
    ...     def response_to_canonical(self, body):
    ...         if "error" in body:
    ...             return None, body
    ...         meta = {key: value for key, value in body.items() if key != "text"}
    ...         return {"role": "assistant", "content": [{"type": "text", "text": body.get("text", "")}]}, meta
    ...     def canonical_to_response(self, message, meta=None, *, model=None, usage=None, stop_reason=None):
    ...         if message is None:
    ...             return dict(meta or {})
    ...         text = "".join(block.get("text", "") for block in message["content"])
    ...         return {**(meta or {}), **({"model": model} if model else {}), "text": text}
    >>> PROVIDERS["plain"].response_message({"model": "m", "text": "hi"})
    {'role': 'assistant', 'content': [{'type': 'text', 'text': 'hi'}]}
    """
    instance: Any = provider() if isinstance(provider, type) else provider
    name = getattr(instance, "NAME", None)
    if not isinstance(name, str) or not isinstance(getattr(instance, "ROUTE", None), str):
        raise PluginError(f"{provider!r} is not a provider: it needs a NAME and a ROUTE (see ProviderBase)")
    with _lock:
        PROVIDERS[name] = instance
    return provider


register_provider(BedrockConverse)
register_provider(BedrockInvoke)


def load_installed() -> None:
    """Register the providers installed packages offer (entry-point group ``tracekit.providers``), once per
    process; ``PluginError`` names one that cannot be loaded."""
    global _installed
    if _installed:
        return
    for _name, provider in load(GROUP):
        register_provider(provider)
    _installed = True


def get_provider(name: str) -> Provider:
    """The provider called ``name`` ('anthropic', 'openai', 'openai_responses' or an installed one);
    ``KeyError`` naming the known ones otherwise."""
    if name not in PROVIDERS:
        load_installed()
    try:
        return PROVIDERS[name]
    except KeyError:
        raise KeyError(f"unknown provider {name!r}; known: {', '.join(sorted(PROVIDERS))}") from None


def provider_for_path(path: str) -> Provider | None:
    """The provider serving a request path (query string and a trailing slash ignored), or None."""
    load_installed()
    route = path.split("?", 1)[0].rstrip("/")
    for provider in PROVIDERS.values():
        if route == provider.ROUTE or route.endswith(provider.ROUTE):
            return provider
        if "{" in provider.ROUTE and _route_pattern(provider.ROUTE).search(route):
            return provider.for_route(route) or provider
    return None


@lru_cache(maxsize=64)
def _route_pattern(route: str) -> re.Pattern[str]:
    """An aiohttp route pattern (``/model/{model}/{op:a|b}``) as a regular expression matching a path's end."""
    parts = re.split(r"(\{[^{}]*\})", route)
    pattern = "".join(f"(?:{part[1:-1].partition(':')[2] or '[^/]+'})" if part.startswith("{") else re.escape(part)
                      for part in parts)  # fmt: skip
    return re.compile(pattern + "$")


def routes() -> dict[str, Provider]:
    """Each provider's model endpoint -> the provider, installed ones included (what the proxy serves)."""
    load_installed()
    return {provider.ROUTE: provider for provider in PROVIDERS.values()}
