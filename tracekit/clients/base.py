"""What a model client is: ``ModelClient.open(use)`` gives the ``Endpoint`` a model's requests go to.

tracekit never talks to a model in any other way: the reference agent, an ``--agent-cmd`` agent and the
judge all send their requests through a tracekit proxy (which records them and applies the case's
intercepts), and the proxy forwards them to the endpoint. An endpoint is the base URL of a server that
speaks the requests' wire protocol (Anthropic Messages, or OpenAI Chat Completions): a model API, a
local server, or one a client starts in-process for the length of one use (a stand-in answering from a
script, as ``tracekit.testing.FakeModelClient`` does).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tracekit.cases import Case, Catalog

Purpose = Literal["agent", "judge"]
WireProtocol = Literal["anthropic", "openai"]


@dataclass(frozen=True)
class ModelUse:
    """What a model is opened for."""

    purpose: Purpose
    """``agent``: a run's agent asks for its turns (``tracekit run``); ``judge``: the judge asks for verdicts."""
    provider: WireProtocol = "anthropic"
    """The wire protocol of the requests: ``anthropic`` (Messages) or ``openai`` (Chat Completions)."""
    base_url: str | None = None
    """The model API the person named (``--base-url``, or ``ANTHROPIC_BASE_URL`` for the judge), if any."""
    case: Case | None = None
    """The case being run or judged: one endpoint per job when running; when judging, only ``declines``
    gets a case (one endpoint serves every case)."""
    catalog: Catalog | None = None
    """The case library's tool catalog (runs only)."""


class Endpoint:
    """Where a model's requests go for one use; a context manager, open until ``close``.

    ``url`` is the base URL the proxy forwards to: the Anthropic API's ``https://api.anthropic.com``, or
    an OpenAI-compatible server's base with its ``/v1`` (``https://api.openai.com/v1``). ``meta`` is added to
    the header ``meta`` of each trace a run makes with this endpoint: say there how the answers were made.
    """

    def __init__(self, url: str, meta: Mapping[str, Any] | None = None) -> None:
        self.url = url
        self.meta: dict[str, Any] = dict(meta or {})

    def errors(self) -> list[str]:
        """What failed on the model's side while it served (each request was answered with an error
        status); a run reports them as the job's error. None by default."""
        return []

    def close(self) -> None:
        """Stop whatever ``ModelClient.open`` started (nothing by default)."""

    def __enter__(self) -> Endpoint:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class ModelClient(ABC):
    """A model, or a family of models named by a prefix: where their requests go (``open``).

    One method to write, ``open``; the attributes and ``declines`` have defaults. A factory registered
    for a prefix (``tracekit.clients.register_model_client``) makes one per model name.
    """

    simulated: bool = False
    """True for a stand-in that is no model (answers from a script): a run's traces then name the model as
    their source (``run:<model>``) instead of the reference agent, and no model plays a case's simulated user
    (the stand-in answers as the agent, not as a person)."""
    api_key: str | None = None
    """The key requests carry when the person gives none; None: the provider's environment variable
    (``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``). A stand-in sets a placeholder."""

    @abstractmethod
    def open(self, use: ModelUse) -> Endpoint:
        """The endpoint for ``use``; the caller closes it when the use is over."""

    def declines(self, use: ModelUse) -> str | None:
        """Why this model takes no part in ``use`` (a run does not start; a judged case stays pending), or
        None when it does. Cheap: it starts nothing."""
        return None
