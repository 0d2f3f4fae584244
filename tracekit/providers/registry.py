"""Every wire format by name: the built-in ones, those registered with ``@register_provider`` and those
installed packages offer (entry-point group ``tracekit.providers``), added on first need.

A provider is any object with the members of ``base.Provider``: a module (the built-in ones), or an
instance of a ``ProviderBase`` subclass (a class is registered as its instance). Adding a wire format is a
provider and one registration: the proxy serves its ``ROUTE`` (and every path its ``match_route`` takes),
records and replays it, and applies the
intercepts of a case to its tool results; nothing outside ``tracekit/providers`` names a format.
"""

from __future__ import annotations

import threading
from typing import Any, TypeVar

from tracekit.entry_points import PROVIDERS as GROUP
from tracekit.entry_points import load
from tracekit.errors import PluginError
from tracekit.providers import anthropic, openai, openai_responses
from tracekit.providers.base import Provider, RouteInfo, fixed_route
from tracekit.providers.gemini import GEMINI

PROVIDERS: dict[str, Provider] = {
    anthropic.NAME: anthropic,
    openai.NAME: openai,
    openai_responses.NAME: openai_responses,
    GEMINI.NAME: GEMINI,
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
    found = match_path(path)
    return found[0] if found is not None else None


def match_path(path: str) -> tuple[Provider, RouteInfo] | None:
    """The provider serving a request path and what the path says (``Provider.match_route``), or None."""
    load_installed()
    route = path.split("?", 1)[0].rstrip("/")
    for provider in PROVIDERS.values():
        match = getattr(provider, "match_route", None)  # (a provider object written before it had one)
        info = match(route) if match is not None else fixed_route(provider.ROUTE, route)
        if info is not None:
            return provider, info
    return None


def routes() -> dict[str, Provider]:
    """Each provider's model endpoint -> the provider, installed ones included (what the proxy serves)."""
    load_installed()
    return {provider.ROUTE: provider for provider in PROVIDERS.values()}
