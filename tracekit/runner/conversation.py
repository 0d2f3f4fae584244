"""What an agent starts from: the system prompt and the first messages of a case, for a skill group.

- The system prompt carries the case's context (current date with its weekday, the user's location, the
  seed's other context lines), the case's own system text, and, for a group with ``skill_enabled``, the
  documents of its active skills (``cases/skills/<name>.md``).
- The messages are the case's input: its history / the seed's injected messages (verbatim, Anthropic
  format), then the user message with the case's images as base64 image blocks (image first, then the
  text, as Anthropic's vision guide recommends). Their number is the K of the analysis's history rule.
"""

from __future__ import annotations

import base64
import datetime as dt
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracekit.cases.model import Case
from tracekit.cases.scoring import SkillGroup
from tracekit.constants import IMAGE_TYPES
from tracekit.errors import CaseError

BASE_PROMPT = "你是一个会使用工具的助手。需要实时或外部信息时调用提供的工具，并根据工具结果如实回答用户。"
WEEKDAYS = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")
#: Context notes that speak to case authors about the seed (not context the seed gives the agent).
_AUTHOR_NOTE_MARKERS = ("种子", "seed", "文章设定")
#: Notes that only restate the date (some seeds call 2026-04-07 a Monday; the prompt states the true weekday).
_DATE_ONLY_PREFIX = "当前日期为"


@dataclass
class AgentStart:
    """Everything an agent needs to start a case."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The offered tools in Anthropic form (name, description, input_schema), in the case's order."""
    skills: list[str] = field(default_factory=list)
    """The skills whose documents are in the system prompt."""


def system_prompt(case: Case, group: SkillGroup | None = None, skill_docs: dict[str, str] | None = None) -> str:
    """The system prompt for ``case`` in ``group`` (see the module docstring)."""
    parts = [BASE_PROMPT]
    context = case.context
    if context.now is not None:
        parts.append(f"当前日期：{context.now.isoformat()}（{WEEKDAYS[context.now.weekday()]}）")
    if context.location:
        parts.append(f"用户所在地：{context.location}")
    note = context.notes
    if note and not any(marker in note for marker in _AUTHOR_NOTE_MARKERS) and not _date_only(note, context.now):
        parts.append(f"背景：{note}")
    if case.input.system:
        parts.append(case.input.system)
    for name in active_skills(group):
        document = (skill_docs or {}).get(name)
        if document is None:
            raise CaseError(f"{case.id}: skill {name!r} has no document (cases/skills/{name}.md)")
        parts.append(f"<skill name=\"{name}\">\n{document.strip()}\n</skill>")
    return "\n\n".join(parts)


def active_skills(group: SkillGroup | None) -> list[str]:
    """The skills a group loads: its active skills when skills are enabled, else none."""
    if group is None or not group.skill_enabled:
        return []
    return list(group.active_skills)


def initial_messages(case: Case, library_root: Path | None = None) -> list[dict[str, Any]]:
    """The case's history followed by its user message (with images); Anthropic message format."""
    messages = [dict(message) for message in case.input.messages]
    images = [image_block(_image_path(case, image.path, library_root)) for image in case.input.images]
    if case.input.user is not None or images:
        text = [{"type": "text", "text": case.input.user}] if case.input.user else []
        content: str | list[dict[str, Any]] = [*images, *text] if images else (case.input.user or "")
        messages.append({"role": "user", "content": content})
    if not messages:
        raise CaseError(f"{case.id}: input has neither a user message nor messages")
    return messages


def image_block(path: Path) -> dict[str, Any]:
    """An Anthropic base64 image block of a local file."""
    media_type = mimetypes.guess_type(path.name)[0] or ""
    if media_type not in IMAGE_TYPES:
        raise CaseError(f"{path}: unsupported image type {media_type or path.suffix!r} (png, jpeg, gif, webp)")
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def agent_start(
    case: Case,
    group: SkillGroup | None,
    tools: list[dict[str, Any]],
    skill_docs: dict[str, str] | None = None,
    library_root: Path | None = None,
) -> AgentStart:
    """System prompt, first messages and tools of a case in a group."""
    return AgentStart(
        system=system_prompt(case, group, skill_docs),
        messages=initial_messages(case, library_root),
        tools=tools,
        skills=active_skills(group),
    )


def _image_path(case: Case, relative: str, library_root: Path | None) -> Path:
    candidates = [Path(relative)] if Path(relative).is_absolute() else []
    if library_root is not None:
        candidates.append(library_root / relative)
    candidates.append(Path(relative))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    where = library_root / relative if library_root is not None else Path(relative)
    raise CaseError(f"{case.id}: image {where} not found (cases/assets/make_images.py makes the case images)")


def _date_only(note: str, now: dt.date | None) -> bool:
    return note.startswith(_DATE_ONLY_PREFIX) and now is not None and "，" not in note
