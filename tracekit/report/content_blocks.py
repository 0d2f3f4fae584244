"""Message content as the trace page shows it: text and thinking as text, an inline base64 image of a known
type as a ``data:`` URI (no request leaves the page), anything else described or shown as indented JSON.

Example::

    content_blocks([{"type": "text", "text": "晴"}])   # [Block(type="text", text="晴")]
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from tracekit.constants import IMAGE_TYPES  # images a trace may carry inline that the page shows
from tracekit.report.case_view import as_mapping
from tracekit.report.env import pretty_json
from tracekit.trace import content_text

_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]+$")


@dataclass
class Block:
    """A piece of message content: text, thinking, an image, or something else described as text."""

    type: str
    text: str = ""
    image_src: str | None = None



def content_blocks(content: Any) -> list[Block]:
    """Message content as the page shows it: text, thinking, inline images; anything else as JSON."""
    if isinstance(content, str):
        return [Block("text", content)]
    blocks = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            blocks.append(Block("text", str(block)))
            continue
        kind = str(block.get("type") or "")
        if kind == "text":
            blocks.append(Block("text", str(block.get("text", ""))))
        elif kind == "thinking":
            blocks.append(Block("thinking", str(block.get("thinking", ""))))
        elif kind == "redacted_thinking":
            blocks.append(Block("thinking", "(redacted thinking)"))
        elif kind in ("tool_use", "server_tool_use"):
            blocks.append(Block("tool_use"))
        elif kind == "image":
            blocks.append(_image(block))
        else:
            blocks.append(Block("other", pretty_json(block)))
    return blocks


def _image(block: Mapping[str, Any]) -> Block:
    """An inline base64 image of a known type is shown (a data: URI, no request); others are described."""
    source = as_mapping(block.get("source"))
    media_type = str(source.get("media_type") or "")
    data = source.get("data")
    if source.get("type") == "base64" and media_type in IMAGE_TYPES and isinstance(data, str) and _BASE64.match(data):
        try:
            base64.b64decode(data, validate=False)
        except (binascii.Error, ValueError):
            pass
        else:
            compact = "".join(data.split())
            return Block("image", f"{media_type}, {len(compact) * 3 // 4:,} bytes",
                         image_src=f"data:{media_type};base64,{compact}")
    where = source.get("url") or source.get("path") or media_type or "image"
    return Block("image", f"image not embedded: {where}")


def result_text(content: Any) -> str:
    """Result content as text; JSON objects and arrays indented so they can be read."""
    text = content_text(content)
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return pretty_json(orjson.loads(stripped))
        except orjson.JSONDecodeError:
            return text
    return text


def plain_text(value: Any) -> str:
    """An error or result value as text (a result's content, marked when it is an error)."""
    if value is None:
        return ""
    if isinstance(value, Mapping) and "content" in value:
        return result_text(value["content"]) + (" (is_error)" if value.get("is_error") else "")
    return value if isinstance(value, str) else pretty_json(value)
