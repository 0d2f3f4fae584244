"""Reading a judge prompt's evidence for the scripted judge's rules: sentences, tool calls and results.

The evidence is the verbatim text ``tracekit.judge.evidence`` renders (``[用户] ...``, ``[工具调用 #i] name
参数：{...}``, ``[工具结果 #i name]（marks） ...``); these helpers read it back. Every verdict a rule builds
with ``verdict`` quotes text that occurs in the evidence and ends its reason with ``TAG``, so that nobody
mistakes a scripted verdict for a model's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tracekit.judge.rules import JudgePrompt

#: Ends every reason the scripted judge gives.
TAG = "（脚本化判断）"

_CALL_LINE = re.compile(r"^\[工具调用 #(\d+)\] (\S+) 参数：(.*)$", re.M)
_RESULT_LINE = re.compile(r"^\[工具结果 #(\d+)(?: (\S+?))?\](（[^）]*）)? (.*)$", re.M)
_USER_LINE = re.compile(r"^\[用户\] (.*)$", re.M)
_SENTENCE_END = "。！？!?\n"


@dataclass
class ToolStep:
    """One tool call of the evidence with its result (``result`` None when none was shown)."""

    index: int
    name: str
    arguments: Any
    """The parsed JSON arguments (the raw text when not JSON)."""
    line: str
    """The call's line as shown in the evidence (a quote the judge may use)."""
    result: str | None = None
    error: bool = False

    @property
    def result_json(self) -> Any:
        """The result parsed as JSON (None when it is not JSON)."""
        return json_or_none(self.result)

    def argument_text(self) -> str:
        """Every string and number in the arguments, squashed and joined (for "was X used in this call")."""
        return "|".join(squash(str(value)) for value in leaf_values(self.arguments))


def tool_steps(text: str) -> list[ToolStep]:
    """The tool calls of an evidence section, in order, each with its result."""
    steps: dict[int, ToolStep] = {}
    for match in _CALL_LINE.finditer(text):
        index = int(match.group(1))
        arguments = json_or_none(match.group(3))
        steps[index] = ToolStep(index, match.group(2), match.group(3) if arguments is None else arguments,
                                match.group(0))  # fmt: skip
    for match in _RESULT_LINE.finditer(text):
        step = steps.get(int(match.group(1)))
        if step is not None:
            step.result = match.group(4)
            step.error = "错误" in (match.group(3) or "")
    return list(steps.values())


def user_messages(prompt: JudgePrompt) -> list[str]:
    """What the user said, in order (history first, then later turns)."""
    text = prompt.sections.get("history", "") + "\n" + prompt.steps
    return [match.group(1) for match in _USER_LINE.finditer(text)]


def json_or_none(text: str | None) -> Any:
    """``text`` parsed as JSON, or None."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def leaf_values(value: Any) -> Iterator[Any]:
    """Every scalar inside a JSON value."""
    if isinstance(value, dict):
        for inner in value.values():
            yield from leaf_values(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from leaf_values(inner)
    elif value is not None:
        yield value


def item_lists(value: Any) -> Iterator[list[dict[str, Any]]]:
    """Every list of objects inside a JSON value (search results, listings, ...)."""
    if isinstance(value, list):
        items = [item for item in value if isinstance(item, dict)]
        if items:
            yield items
        for inner in value:
            yield from item_lists(inner)
    elif isinstance(value, dict):
        for inner in value.values():
            yield from item_lists(inner)


def verdict(result: str, reason: str, quote: str, failure_kind: str | None = None) -> dict[str, Any]:
    """The scripted judge's JSON answer."""
    value: dict[str, Any] = {"verdict": result, "reasons": [reason + TAG], "quotes": [quote]}
    if failure_kind is not None:
        value["failure_kind"] = failure_kind
    return value


def grounds(prompt: JudgePrompt) -> str:
    """History and steps, squashed: where a figure of the answer must come from."""
    return squash(prompt.sections.get("history", "") + prompt.sections.get("steps", "")).replace("：", ":")


def sentences(text: str) -> list[str]:
    """The sentences (and lines) of a text."""
    return [part.strip() for part in re.split(r"(?<=[。！？!?])|\n", text) if part.strip()]


def first_sentence(text: str) -> str:
    """The first sentence of a text (the text itself when it has none)."""
    found = sentences(text)
    return found[0] if found else text


def sentence(text: str, position: int) -> str:
    """The sentence of ``text`` around ``position``."""
    start = max(text.rfind(mark, 0, position) for mark in _SENTENCE_END) + 1
    ends = [index for index in (text.find(mark, position) for mark in _SENTENCE_END) if index >= 0]
    return text[start : (min(ends) + 1 if ends else len(text))].strip()


def squash(text: str) -> str:
    """``text`` without whitespace (figures and names compare across spacing)."""
    return re.sub(r"\s+", "", text)
