"""Azure OpenAI's paths for the two OpenAI wire formats: the bodies are the OpenAI API's, only the paths and
the key header differ, so the ``openai`` and ``openai_responses`` providers serve them (their
``match_route`` asks this module) and their traces are theirs.

Paths, from Microsoft's "Azure OpenAI in Azure AI Foundry Models REST API reference" and the ``openai`` SDK's
``AzureOpenAI`` client (``openai/lib/azure.py``, which rewrites ``/chat/completions`` to
``/deployments/{model}/chat/completions`` under ``{azure_endpoint}/openai`` and sends ``?api-version=``):

- ``/openai/deployments/{deployment}/chat/completions?api-version=...``: the deployment is the model;
- ``/openai/responses?api-version=...`` (``AzureOpenAI`` leaves ``/responses`` outside the deployment);
- ``/openai/v1/chat/completions`` and ``/openai/v1/responses`` (the "v1" API, any OpenAI client): these end
  with the OpenAI routes and need nothing here.

The key travels in the ``api-key`` header (or as an Entra ID bearer token); ``tracekit.redact`` knows both.
"""

from __future__ import annotations

import re

from tracekit.providers.base import BODY_SAYS, RouteInfo

CHAT = "chat/completions"
RESPONSES = "responses"
_DEPLOYMENT = re.compile(r"/openai/deployments/([^/]+)/(chat/completions)")
_UNVERSIONED = re.compile(r"/openai/(responses)")


def azure_route(route: str, endpoint: str) -> RouteInfo | None:
    """What an Azure path says when it is ``endpoint`` (``CHAT`` or ``RESPONSES``): the deployment as the
    model; None for any other path."""
    found = _DEPLOYMENT.search(route)
    if found is not None and found.end() == len(route) and found.group(2) == endpoint:
        return RouteInfo(model=found.group(1))
    found = _UNVERSIONED.search(route)
    if found is not None and found.end() == len(route) and found.group(1) == endpoint:
        return BODY_SAYS
    return None
