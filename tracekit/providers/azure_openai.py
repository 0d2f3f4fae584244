"""Azure OpenAI: the two OpenAI wire formats on Azure's paths. The bodies are the OpenAI API's, so each Azure
provider is the OpenAI one (``openai``, ``openai_responses``) served on other paths, under its own name.

Paths, from Microsoft's "Azure OpenAI in Azure AI Foundry Models REST API reference" and the ``openai`` SDK's
``AzureOpenAI`` client (``openai/lib/azure.py``: ``/chat/completions`` becomes
``/deployments/{model}/chat/completions`` under ``{azure_endpoint}/openai``, with ``?api-version=``):

- ``/openai/deployments/{deployment}/chat/completions``: the deployment is the model the request names;
- ``/openai/v1/chat/completions`` (the "v1" API, which any OpenAI client reaches with
  ``base_url={endpoint}/openai/v1/``);
- ``/openai/responses`` (``AzureOpenAI`` leaves ``/responses`` outside the deployment) and
  ``/openai/v1/responses``.

The key travels in the ``api-key`` header (or as an Entra ID bearer token); ``tracekit.redact`` knows both.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from tracekit.providers import openai, openai_responses

_DEPLOYMENT = re.compile(r"/openai/deployments/([^/]+)/")


class OnAzure:
    """An OpenAI wire format (a provider module) served on Azure OpenAI's paths: every member is the wire's,
    but ``NAME``, ``ROUTE`` and the model, which a deployment path names."""

    API_PATHS = ("/openai/",)
    CLIENT_HEADERS = ("api-key",)

    def __init__(self, name: str, route: str, wire: Any, deployment: str | None = None) -> None:
        self.NAME = name
        self.ROUTE = route
        self._wire = wire
        self._deployment = deployment

    def __getattr__(self, member: str) -> Any:
        if member.startswith("_"):  # (``_wire`` itself, before ``__init__``: copying makes such an object)
            raise AttributeError(member)
        return getattr(self._wire, member)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *dir(self._wire)})

    def for_route(self, path: str) -> OnAzure | None:
        """A copy bound to the deployment a path names (None for a path that names none)."""
        found = _DEPLOYMENT.search(path)
        return OnAzure(self.NAME, self.ROUTE, self._wire, unquote(found[1])) if found else None

    def request_model(self, body: dict[str, Any]) -> str | None:
        """The deployment, or the body's ``model``."""
        return self._deployment or self._wire.request_model(body)


AZURE_CHAT = OnAzure("azure_openai", "/openai/{where:deployments/[^/]+|v1}/chat/completions", openai)
"""Chat Completions on Azure (registered as ``azure_openai``)."""
AZURE_RESPONSES = OnAzure("azure_openai_responses", "/openai/{where:v1/responses|responses}", openai_responses)
"""The Responses API on Azure (registered as ``azure_openai_responses``)."""
