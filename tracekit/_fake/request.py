"""A request as the fake upstream received it: what scripts look at and what tests assert on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote

Provider = Literal["anthropic", "openai", "openai_responses", "bedrock_converse", "bedrock_invoke"]
#: The routes whose path names the model and the stream (``/model/{modelId}/converse-stream``).
PATH_ROUTED = ("bedrock_converse", "bedrock_invoke")


@dataclass
class FakeRequest:
    """One HTTP request received by the fake upstream, in arrival order.

    ``path`` excludes the query string, which is in ``query`` (the anthropic SDK's beta routes send
    ``?beta=true``). ``headers`` has lower-case names (repeated headers joined with ``", "``).
    ``body`` is the parsed JSON body, or None when the body is not JSON. ``messages`` is the
    conversation the model sees: the body's ``messages``, or for an Anthropic thread continuation
    (``thread.previous_message_id``) the thread's stored history followed by the new messages; for the
    Responses API, the ``input`` items, after the stored conversation of ``previous_response_id``.
    """

    index: int
    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    raw: bytes
    provider: Provider | None
    query: Mapping[str, str] = field(default_factory=dict)
    messages: Sequence[Any] = field(default_factory=list)
    raw_path: str = ""
    """The path as it came on the wire, percent-encoding kept (what a SigV4 signature covers)."""

    @property
    def stream(self) -> bool:
        """Whether the request asked for a stream (SSE, or Bedrock's event stream: the path says so)."""
        if self.provider in PATH_ROUTED:
            return self.path.rstrip("/").endswith("-stream")
        return isinstance(self.body, dict) and bool(self.body.get("stream"))

    @property
    def model(self) -> str:
        """The requested model (empty when absent; Bedrock's is in the path, ``/model/{modelId}/...``)."""
        if self.provider in PATH_ROUTED:
            parts = (self.raw_path or self.path).split("/")  # (encoded: an ARN model id holds a ``%2F``)
            return unquote(parts[2]) if len(parts) > 3 and parts[1] == "model" else ""
        model = self.body.get("model") if isinstance(self.body, dict) else None
        return model if isinstance(model, str) else ""

    @property
    def thread(self) -> Mapping[str, Any] | None:
        """The Anthropic ``thread`` field (``{"type": "create"}`` / ``{"type": "continue", ...}``), if any."""
        thread = self.body.get("thread") if isinstance(self.body, dict) else None
        return thread if isinstance(thread, dict) else None

    @property
    def retry_count(self) -> int:
        """The SDK's ``x-stainless-retry-count`` header (0 for a first attempt or when absent)."""
        try:
            return int(self.headers.get("x-stainless-retry-count", "0"))
        except ValueError:
            return 0

    @property
    def assistant_turns(self) -> int:
        """How many assistant messages the conversation (``messages``) already holds (for the Responses API:
        runs of consecutive assistant-side items, one response's output being one run)."""
        if self.provider == "openai_responses":
            sides = [_assistant_side(item) for item in self.messages]
            return sum(1 for i, side in enumerate(sides) if side and (i == 0 or not sides[i - 1]))
        return sum(
            1 for message in self.messages if isinstance(message, dict) and message.get("role") == "assistant"
        )


def _assistant_side(item: Any) -> bool:
    """Whether a Responses item is model output: an assistant message, a reasoning item or a ``*_call``."""
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    if kind in (None, "message"):
        return item.get("role") == "assistant"
    return kind == "reasoning" or (isinstance(kind, str) and kind.endswith("_call"))
