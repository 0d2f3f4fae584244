"""Server-held conversations for the Anthropic message-threads beta, as far as the fake needs them.

The anthropic SDK 2.x tool runner (``client.beta.messages.tool_runner``) threads by default: its first
request carries ``thread: {"type": "create"}`` and the whole history; each later one carries
``thread: {"type": "continue", "previous_message_id": <id of the last reply>}``, only the new messages,
and no ``system`` / ``tools`` (the server keeps the ones the thread was created with). Each reply can be
continued once. On ``thread_not_found``, ``thread_already_continued`` or ``thread_continue_in_flight``
(``error.details.error_code``) the SDK re-sends the full history under a new thread.

The store keeps, per reply id, the full conversation up to and including that reply, so that a
continuation is answered against the conversation the model would see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracekit._fake.replies import ErrorReply, error_reply


@dataclass(frozen=True)
class StoredThread:
    """The conversation held under one reply id, with the create-only fields the thread was created with."""

    messages: tuple[Any, ...]
    create_fields: Mapping[str, Any]


#: Fields a continuation takes from the thread and must not repeat.
CREATE_ONLY_FIELDS = ("system", "tools")


class ThreadStore:
    """Threads by reply id; which replies were continued or are being continued."""

    def __init__(self) -> None:
        self._threads: dict[str, StoredThread] = {}
        self._continued: set[str] = set()
        self._in_flight: set[str] = set()

    def resolve(self, body: Mapping[str, Any]) -> tuple[list[Any], ErrorReply | None]:
        """The full conversation of a request, or the error the API gives for a continuation it refuses.

        A continuation that is accepted is marked in flight until ``release`` is called."""
        messages = list(body.get("messages") or [])
        thread = body.get("thread")
        if not isinstance(thread, Mapping) or thread.get("type") != "continue":
            return messages, None
        previous = thread.get("previous_message_id")
        stored = self._threads.get(previous) if isinstance(previous, str) else None
        if stored is None:
            return messages, _thread_error(
                404,
                "not_found_error",
                "thread_not_found",
                f"No thread state was found for previous_message_id {previous!r}.",
            )
        assert isinstance(previous, str)
        if previous in self._continued:
            return messages, _thread_error(
                400,
                "invalid_request_error",
                "thread_already_continued",
                f"The response {previous!r} has already been continued.",
            )
        if previous in self._in_flight:
            return messages, _thread_error(
                400,
                "invalid_request_error",
                "thread_continue_in_flight",
                f"Another request is still continuing from {previous!r}.",
            )
        repeated = [name for name in CREATE_ONLY_FIELDS if name in body]
        if repeated:
            return messages, error_reply(
                400,
                "invalid_request_error",
                f"{' and '.join(repeated)}: cannot be sent on a thread continuation; "
                "the thread keeps the ones it was created with.",
                should_retry=False,
            )
        self._in_flight.add(previous)
        return [*stored.messages, *messages], None

    def record_reply(
        self, body: Mapping[str, Any], messages: Sequence[Any], reply_message: Mapping[str, Any]
    ) -> None:
        """Hold the conversation up to ``reply_message`` under its id, and mark the continued reply used.

        Called just before the reply's last bytes are sent, so that the client can never continue from a
        reply the store does not hold yet. Requests without a ``thread`` field leave the store alone."""
        thread = body.get("thread")
        if not isinstance(thread, Mapping):
            return
        previous = thread.get("previous_message_id") if thread.get("type") == "continue" else None
        create_fields: Mapping[str, Any] = {name: body[name] for name in CREATE_ONLY_FIELDS if name in body}
        if isinstance(previous, str):
            self._continued.add(previous)
            if previous in self._threads:
                create_fields = self._threads[previous].create_fields
        assistant = {"role": "assistant", "content": reply_message["content"]}
        self._threads[reply_message["id"]] = StoredThread((*messages, assistant), create_fields)

    def release(self, body: Mapping[str, Any]) -> None:
        """End the in-flight mark of a continuation, whatever its outcome."""
        thread = body.get("thread")
        if isinstance(thread, Mapping) and thread.get("type") == "continue":
            self._in_flight.discard(thread.get("previous_message_id"))

    def forget(self, message_id: str) -> None:
        """Drop the thread held under ``message_id`` (to script a server that lost it)."""
        self._threads.pop(message_id, None)


def _thread_error(status: int, error_type: str, code: str, message: str) -> ErrorReply:
    return error_reply(status, error_type, message, details={"error_code": code}, should_retry=False)
