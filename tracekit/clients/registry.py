"""Model names to model clients: a prefix registry, filled by decorator or by entry point.

``model_client("local:qwen3")`` asks the factory registered for the prefix ``local`` (the part of the name
before its first ``:``) for a client. A prefix is registered by ``@register_model_client("local")`` when
the module that says so is imported, or by an entry point of the group ``tracekit.model_clients`` (name:
the prefix, value: the factory), which is loaded only when a name with that prefix is asked for and no
factory is registered for it yet. A name without a registered prefix (``claude-sonnet-4-5``,
``llama3:8b``) goes to a model API: ``ApiModelClient``, the default client (``claude-sonnet-4-5`` goes to
``https://api.anthropic.com``, ``gpt-4.1 --provider openai`` to ``https://api.openai.com/v1``, and any
name to ``--base-url`` when one is given).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TypeVar

from tracekit.clients.base import Endpoint, ModelClient, ModelUse
from tracekit.entry_points import MODEL_CLIENTS
from tracekit.errors import ModelClientError

#: The model APIs, by wire protocol.
DEFAULT_UPSTREAMS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
#: The environment variable holding each provider's API key.
API_KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}

class ApiModelClient(ModelClient):
    """A model behind a real API: the requests go to ``use.base_url`` or the provider's API."""

    def open(self, use: ModelUse) -> Endpoint:
        """An endpoint that starts nothing: the API is already there."""
        return Endpoint(use.base_url or DEFAULT_UPSTREAMS[use.provider])


#: The entry-point group through which installed packages register model-name prefixes.
ENTRY_POINT_GROUP = MODEL_CLIENTS

ClientFactory = Callable[[str], ModelClient]
"""Makes the client of one model name (the whole name, prefix included); may raise ``ModelClientError``
for a name it does not know."""
_Factory = TypeVar("_Factory", bound=ClientFactory)

_factories: dict[str, ClientFactory] = {}
_not_installed: set[str] = set()
_lock = threading.Lock()


def register_model_client(prefix: str) -> Callable[[_Factory], _Factory]:
    """Register the decorated factory (a function or a class taking the model name) for ``prefix``.

    A later registration of the same prefix replaces the earlier one; an entry point is only consulted
    for a prefix nothing registered.

    >>> from tracekit.clients import Endpoint, ModelClient, model_client, register_model_client
    >>> @register_model_client("local")
    ... class LocalServer(ModelClient):
    ...     "``local:<model>``: an OpenAI-compatible server on this machine."
    ...     api_key = "no-key"
    ...     def __init__(self, model):
    ...         self.model = model
    ...     def open(self, use):
    ...         return Endpoint("http://127.0.0.1:8000/v1")
    >>> model_client("local:qwen3").model
    'local:qwen3'
    """
    if not prefix or ":" in prefix or prefix != prefix.strip():
        raise ValueError(f"a model-name prefix is a non-empty word without ':' or spaces around it, not {prefix!r}")

    def register(factory: _Factory) -> _Factory:
        with _lock:
            _factories[prefix] = factory
        return factory

    return register


def model_client(model: str) -> ModelClient:
    """The client of ``model``: the registered factory's for its prefix, else a model API's.

    Raises ``ModelClientError`` when the prefix's entry point cannot be loaded or its factory refuses the
    name (a stand-in that has no such model).
    """
    prefix, colon, _ = model.partition(":")
    factory = _factory(prefix) if colon else None
    if factory is None:
        return ApiModelClient()
    client = factory(model)
    if not callable(getattr(client, "open", None)):
        raise ModelClientError(f"model {model!r}: the factory registered for {prefix!r} made {client!r}, "
                               "which is not a ModelClient (it has no open method)")
    return client


def model_client_prefixes() -> list[str]:
    """The prefixes registered so far and those installed packages offer, without loading any of them."""
    installed = {point.name for point in entry_points(group=ENTRY_POINT_GROUP)}
    with _lock:
        return sorted(installed | set(_factories))


def _factory(prefix: str) -> ClientFactory | None:
    with _lock:
        found = _factories.get(prefix)
        if found is not None or prefix in _not_installed:
            return found
        points = entry_points(group=ENTRY_POINT_GROUP, name=prefix)
        if not points:
            _not_installed.add(prefix)
            return None
        point = next(iter(points))
        try:
            loaded = point.load()
        except Exception as exc:  # any failure of someone else's import is theirs to fix, named here
            raise ModelClientError(
                f"the model-name prefix {prefix!r} is installed as {point.value!r} (entry point group "
                f"{ENTRY_POINT_GROUP}), which cannot be loaded: {type(exc).__name__}: {exc}"
            ) from exc
        if not callable(loaded):
            raise ModelClientError(f"the entry point {point.value!r} for the model-name prefix {prefix!r} "
                                   "is not a factory (a function or class taking the model name)")
        _factories[prefix] = loaded
        return loaded
