"""The default model client: a model API (the provider's, or the base URL the person gave).

Every model name whose prefix no client claims is served this way: ``claude-sonnet-4-5`` goes to
``https://api.anthropic.com``, ``gpt-4.1 --provider openai`` to ``https://api.openai.com/v1``, and any
name to ``--base-url`` when one is given.
"""

from __future__ import annotations

from tracekit.clients.base import Endpoint, ModelClient, ModelUse

#: The model APIs, by wire protocol.
DEFAULT_UPSTREAMS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
#: The environment variable holding each provider's API key.
API_KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


class ApiModelClient(ModelClient):
    """A model behind a real API: the requests go to ``use.base_url`` or the provider's API."""

    def open(self, use: ModelUse) -> Endpoint:
        """An endpoint that starts nothing: the API is already there."""
        return Endpoint(use.base_url or DEFAULT_UPSTREAMS[use.provider])
