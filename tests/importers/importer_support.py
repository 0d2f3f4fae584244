"""Helpers of the importer tests: input files written in code, and the check that a bad one is refused by
file and position."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tracekit.errors import ImportFormatError


def write_json(path: Path, value: object) -> Path:
    """Write ``value`` to ``path`` as UTF-8 JSON with Chinese unescaped, as exported chats are; the path."""
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def assert_refused_at(path: Path, where: str, read: Callable[[], object]) -> None:
    """``read()`` raises ``ImportFormatError`` whose message starts with ``path`` and names the position ``where``."""
    with pytest.raises(ImportFormatError) as caught:
        read()
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    assert where in message, message
