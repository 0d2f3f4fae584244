"""Model clients: which model name goes where, and how a package adds its own models.

A model client says where the requests for a model go (``ModelClient.open`` returns an ``Endpoint``).
tracekit picks it by the model name's prefix, the part before the first ``:``; a name whose prefix no
client claims goes to a model API (the provider's, or ``--base-url``). ``tracekit run`` (the reference
agent and ``--agent-cmd`` agents) and the judge (``tracekit judge``, ``tracekit analyze --judge-model``)
resolve every model this way, and their requests always pass through a tracekit proxy in front of the
endpoint, so recording, intercepts and replay are the same for every model.

Example: models served by an OpenAI-compatible server on this machine, named ``local:<model>``::

    import os

    from tracekit.clients import Endpoint, ModelClient, ModelUse, register_model_client


    @register_model_client("local")
    class LocalServer(ModelClient):
        \"\"\"``local:<model>``: an OpenAI-compatible server on this machine (vLLM, llama.cpp, ...).\"\"\"

        api_key = "no-key"  # the server needs none; without this a run asks for OPENAI_API_KEY

        def __init__(self, model: str) -> None:
            self.model = model

        def open(self, use: ModelUse) -> Endpoint:
            return Endpoint(os.environ.get("LOCAL_MODEL_URL", "http://127.0.0.1:8000/v1"))

``tracekit run CASES --model local:qwen3 --provider openai --out runs/qwen3`` then runs the reference
agent against that server. Requests carry the whole name as their model (serve it under that name).

A package makes its prefixes known without being imported first, by an entry point of the group
``tracekit.model_clients`` (name: the prefix; value: the factory) in its ``pyproject.toml``::

    [project.entry-points."tracekit.model_clients"]
    local = "my_package.models:LocalServer"

tracekit loads it only when a model name with that prefix is asked for. A stand-in that answers
in-process from a script (tests, offline demos) is a ``tracekit.testing.FakeModelClient``; the offline
demo shipped with tracekit registers its own prefix this way.

- ``ModelClient``, ``ModelUse``, ``Endpoint``: the contract (``tracekit.clients.base``).
- ``register_model_client``, ``model_client``, ``model_client_prefixes``: the registry.
- ``ApiModelClient``: the default, a model API.
"""

from tracekit.clients.base import Endpoint, ModelClient, ModelUse, Purpose, WireProtocol
from tracekit.clients.registry import (
    API_KEY_VARIABLES,
    DEFAULT_UPSTREAMS,
    ENTRY_POINT_GROUP,
    ApiModelClient,
    ClientFactory,
    model_client,
    model_client_prefixes,
    register_model_client,
)

__all__ = [
    "API_KEY_VARIABLES",
    "DEFAULT_UPSTREAMS",
    "ENTRY_POINT_GROUP",
    "ApiModelClient",
    "ClientFactory",
    "Endpoint",
    "ModelClient",
    "ModelUse",
    "Purpose",
    "WireProtocol",
    "model_client",
    "model_client_prefixes",
    "register_model_client",
]
