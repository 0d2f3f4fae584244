"""Stored responses for the Responses API's ``previous_response_id`` and its kept conversations
(``conversation``, made by ``POST /v1/conversations``), as far as the fake needs them.

A request naming ``previous_response_id`` sends only its new input items; the API answers it against the
stored conversation: the previous response's input, its output, then the new items. A response is stored
unless its request says ``store: false``; a continuation of a response the store does not hold gets the
API's 404 ``previous_response_not_found``. Unlike Anthropic threads, a response can be continued any
number of times (each continuation branches). A request naming a ``conversation`` is answered against that
conversation's items, and its input and output are added to the conversation (an unknown one is a 404).

Example::

    store = ResponseStore()
    items, error = store.resolve({"input": "hi"})          # [{"role": "user", "content": "hi"}], None
    store.record({"input": "hi"}, items, {"id": "resp_1", "output": [...]})
    items, error = store.resolve({"previous_response_id": "resp_1", "input": [...]})
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from tracekit._fake.replies import ErrorReply


def input_items(body: Mapping[str, Any]) -> list[Any]:
    """A request's ``input`` as a list of items (a string is one user message)."""
    value = body.get("input")
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


def conversation_id(body: Mapping[str, Any]) -> str | None:
    """The id of the conversation a request names (``"conv_..."`` or ``{"id": "conv_..."}``), or None."""
    value = body.get("conversation")
    if isinstance(value, Mapping):
        value = value.get("id")
    return value if isinstance(value, str) and value else None


class ResponseStore:
    """The conversation up to and including each stored response, by response id."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[Any, ...]] = {}
        self._conversations: dict[str, tuple[Any, ...]] = {}
        self._numbers = itertools.count(1)

    def create_conversation(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/conversations``: a new conversation holding the body's ``items``; its API object."""
        items = body.get("items")
        conversation_id = f"conv_fake{next(self._numbers):06d}"
        self._conversations[conversation_id] = tuple(items) if isinstance(items, list) else ()
        metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        return {"id": conversation_id, "object": "conversation", "created_at": 1767225600, "metadata": metadata}

    def resolve(self, body: Mapping[str, Any]) -> tuple[list[Any], ErrorReply | None]:
        """The full conversation of a request, or the 404 the API gives for an unknown previous response."""
        items = input_items(body)
        conversation = conversation_id(body)
        if conversation is not None:
            kept = self._conversations.get(conversation)
            if kept is None:
                return items, ErrorReply(status=404, type="not_found_error",
                                         message=f"Conversation with id '{conversation}' not found.",
                                         should_retry=False, openai_type="invalid_request_error",
                                         param="conversation")  # fmt: skip
            return [*kept, *items], None
        previous = body.get("previous_response_id")
        if previous is None:
            return items, None
        held = self._held.get(previous) if isinstance(previous, str) else None
        if held is None:
            return items, ErrorReply(
                status=404,
                type="not_found_error",
                message=f"Previous response with id '{previous}' not found.",
                should_retry=False,
                openai_type="invalid_request_error",
                openai_code="previous_response_not_found",
                param="previous_response_id",
            )
        return [*held, *items], None

    def record(self, body: Mapping[str, Any], items: Sequence[Any], response: Mapping[str, Any]) -> None:
        """Hold the conversation up to ``response`` under its id (unless the request said ``store: false``).

        Called just before the response's last bytes are sent, so that a client can never continue from a
        response the store does not hold yet."""
        conversation = conversation_id(body)
        if conversation in self._conversations:
            self._conversations[conversation] = (*items, *response.get("output", ()))
        if body.get("store") is False:
            return
        self._held[str(response["id"])] = (*items, *response.get("output", ()))

    def forget(self, response_id: str) -> None:
        """Drop a stored response (to script a server that lost it)."""
        self._held.pop(response_id, None)
