"""Writing result files (JSON, HTML, Markdown, XML, logs) through the one sanitizer.

Every file tracekit writes goes through ``tracekit.redact`` first: trace files via ``TraceWriter``,
everything else via these two functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tracekit.redact import Redactor, default_redactor


def write_text(path: str | Path, text: str, redactor: Redactor | None = None) -> Path:
    """Write UTF-8 ``text`` to ``path`` (parents created) with secrets redacted."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((redactor or default_redactor()).redact_text(text), encoding="utf-8")
    return path


def write_json(path: str | Path, value: Any, redactor: Redactor | None = None, indent: bool = True) -> Path:
    """Write ``value`` as JSON (UTF-8, Chinese kept as is) with secrets redacted."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0)
    path.write_bytes((redactor or default_redactor()).redact_bytes(data))
    return path
