"""The Jinja environment of the reports: templates from ``tracekit/report/templates/``, always
autoescaped, strict about undefined names, and a few formatting filters.

Everything a trace contributes (tool names, arguments, results, answers) reaches the page only
through autoescaped expressions, so ``<script>`` in a tool result is shown as text. Links are built
here from slugs, never taken from content.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

TEMPLATES = Path(__file__).parent / "templates"

#: Texts longer than this (characters) or with more lines are folded into a <details>.
FOLD_CHARS = 600
FOLD_LINES = 12
#: Texts longer than this are cut on the page (the trace file keeps them whole).
MAX_CHARS = 100_000

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


@lru_cache(maxsize=1)
def report_environment() -> Environment:
    """The shared, autoescaping environment (templates are compiled once per process)."""
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update({
        "pretty": pretty_json,
        "compact": compact_json,
        "lang": lang_attribute,
        "pct": percent,
        "pp": percentage_points,
        "signed": signed,
        "num": number,
        "duration": duration,
        "is_long": is_long,
        "preview": preview,
        "clip": clip,
    })
    return env


def pretty_json(value: Any) -> str:
    """Indented JSON with Chinese kept as is (key order as given: the input decides, so it is stable)."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def compact_json(value: Any, limit: int = 160) -> str:
    """One-line JSON, cut at ``limit`` characters."""
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def lang_attribute(text: Any) -> Markup:
    """`` lang="zh-CN"`` when the text has Chinese characters, so CJK fonts and line breaking apply."""
    return Markup(' lang="zh-CN"') if has_cjk(text) else Markup("")


def has_cjk(text: Any) -> bool:
    """Whether the text contains CJK characters or full-width punctuation."""
    return bool(_CJK.search(text if isinstance(text, str) else str(text)))


def percent(value: float | None) -> str:
    """``0.625`` -> ``62%``; ``None`` -> ``—``."""
    return "—" if value is None else f"{100 * value:.0f}%"


def percentage_points(value: float | None) -> str:
    """Signed percentage points: ``+12 pp``."""
    return "—" if value is None else f"{value:+.0f} pp"


def signed(value: float | None, digits: int = 1) -> str:
    """A signed number: ``+3.5``, ``−2``; ``—`` for None."""
    if value is None:
        return "—"
    text = f"{value:+,.{digits}f}"
    if digits and "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.replace("-", "−")


def number(value: Any, digits: int = 0) -> str:
    """A number with thousands separators (``—`` for None)."""
    if value is None or value == "":
        return "—"
    if isinstance(value, (int, float)):
        return f"{value:,.{digits}f}"
    return str(value)


def duration(ms: float | None) -> str:
    """Milliseconds as ``840 ms`` or ``12.4 s``."""
    if ms is None:
        return "—"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def is_long(text: str) -> bool:
    """Whether a text is folded on the page."""
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


def preview(text: str, limit: int = 140) -> str:
    """The first line(s) of a folded text, shortened."""
    first = " ".join(text.split())
    return clip(first, limit)


def clip(text: str, limit: int = MAX_CHARS) -> str:
    """At most ``limit`` characters, with a note of how much was cut."""
    if len(text) <= limit:
        return text
    if limit < 200:
        return text[: limit - 1] + "…"
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters cut; the trace file has them all)"
