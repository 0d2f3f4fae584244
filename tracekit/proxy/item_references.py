"""Responses API ``item_reference`` inputs read as the items they name.

A Responses API request may send an earlier output item back as ``{"type": "item_reference", "id": "msg_..."}``
instead of the item itself (API reference, "Create a model response": ``input`` item "Item reference"); the
Vercel AI SDK's ``@ai-sdk/openai`` does so for the assistant messages of a stored response. The server knows
the item; the proxy learns it from the answer that produced it, so that the request's conversation (what
stitches it to its session and what its trace shows) holds the assistant's message, not a reference. The
request is forwarded and recorded as it was sent.

Example::

    items = OutputItems()
    items.learn({"output": [{"id": "msg_1", "type": "message", "role": "assistant", "content": [...]}]})
    items.resolve({"input": [{"type": "item_reference", "id": "msg_1"}]})   # the message in its place
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

#: How many output items are remembered (the oldest are forgotten first).
KEPT_ITEMS = 20_000


class OutputItems:
    """The output items of recent Responses API answers, by id (see the module docstring)."""

    def __init__(self, limit: int = KEPT_ITEMS) -> None:
        self.limit = limit
        self._items: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def learn(self, response: Any) -> None:
        """Remember the identified output items of one response body."""
        output = response.get("output") if isinstance(response, dict) else None
        for item in output if isinstance(output, list) else ():
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                self._items[item["id"]] = item
                self._items.move_to_end(item["id"])
        while len(self._items) > self.limit:
            self._items.popitem(last=False)

    def resolve(self, body: Any) -> Any:
        """``body`` with each ``item_reference`` input the proxy knows replaced by its item (a copy; the same
        object when there is nothing to replace)."""
        items = body.get("input") if isinstance(body, dict) else None
        if not isinstance(items, list) or not any(_is_reference(item) for item in items):
            return body
        resolved = [self._items.get(item["id"], item) if _is_reference(item) else item for item in items]
        return {**body, "input": resolved}


def _is_reference(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "item_reference" and isinstance(item.get("id"), str)
