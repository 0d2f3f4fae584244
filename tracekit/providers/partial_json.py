"""Parsing tool-argument JSON that may be cut short, the way the official SDKs do.

Both SDKs parse a growing ``input_json_delta`` / ``arguments`` buffer with ``jiter.from_json(...,
partial_mode=True)``: a cut-off document gives the complete part (unfinished strings dropped). jiter is
a dependency of both SDKs and of tracekit itself.
"""

from __future__ import annotations

from typing import Any

import jiter


def parse_partial_json(text: str) -> Any:
    """The value of a possibly truncated JSON document; the raw ``text`` when it cannot be parsed."""
    try:
        return jiter.from_json(text.encode("utf-8"), partial_mode=True)
    except ValueError:
        return text
