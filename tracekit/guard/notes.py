"""The guard's note to the model, added to a request in the shape of the API it speaks.

The note goes after the tool results, where the model reads it before it answers:

- Anthropic Messages: a text block at the end of the last user message (the one holding the results);
- OpenAI Chat Completions: a user message after the ``tool`` messages;
- OpenAI Responses: a user message item after the ``function_call_output`` items (a string ``input``
  becomes a list of the two messages).

Example::

    body = with_note("anthropic", request_body, "tracekit guard: this call was made 3 times ...")
"""

from __future__ import annotations

import copy
from typing import Any


def with_note(provider: str, body: dict[str, Any], note: str) -> dict[str, Any] | None:
    """A copy of ``body`` with ``note`` added; None when the body has no conversation to add it to."""
    if provider == "openai_responses":
        given = body.get("input")
        if isinstance(given, str):
            items: list[Any] = [{"role": "user", "content": given}]
        elif isinstance(given, list):
            items = list(given)
        else:
            return None
        items.append({"role": "user", "content": [{"type": "input_text", "text": note}]})
        return {**body, "input": items}
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    messages = list(messages)
    last = messages[-1] if messages else None
    if provider == "anthropic" and isinstance(last, dict) and last.get("role") == "user":
        last = copy.copy(last)
        content = last.get("content")
        blocks = list(content) if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        blocks.append({"type": "text", "text": note})
        last["content"] = blocks
        messages[-1] = last
    else:
        messages.append({"role": "user", "content": note})
    return {**body, "messages": messages}
