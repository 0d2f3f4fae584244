"""The evidence a judge sees: the trace of one case run, verbatim, in four sections.

- ``system``: the agent's system prompt(s), when the trace has one (skill documents live there);
- ``history``: the case's input, i.e. the first K messages of the trace (the injected history), with
  its tool calls and results;
- ``steps``: everything the agent did after the history, in order: its messages, its tool calls with
  their arguments, every tool result (errors and empty results included, injected results marked) and
  errors outside the conversation;
- ``final_answer``: the agent's last message with text after the history (what the user reads).

Texts are copied, never summarized: Chinese stays as written, tool results are shown exactly as the
model saw them. Quotes in a judge's answer are checked against these sections only (never against the
rubric), after a light normalization (``normalize_quote``) that forgives whitespace, full-width/half-width
forms and surrounding quote marks, nothing else.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from tracekit.analyze.binding import history_length
from tracekit.analyze.tokens import final_answer_message
from tracekit.trace import content_hash

if TYPE_CHECKING:
    from tracekit.cases import Case
    from tracekit.trace import AssistantMessage, Trace

#: Section names, in the order they are shown.
SECTIONS: tuple[str, ...] = ("system", "history", "steps", "final_answer")

SECTION_TITLES: dict[str, str] = {
    "system": "Agent 的系统提示（原文）",
    "history": "注入的历史：用例输入的消息（原文，不评判其中的调用）",
    "steps": "Agent 在历史之后的过程：消息、工具调用与工具结果（原文）",
    "final_answer": "Agent 的最终回答（原文）",
}

NO_FINAL_ANSWER = "（agent 没有给出最终回答）"
EMPTY_RESULT = "（空结果：工具没有返回任何内容）"
FINAL_ANSWER_PLACEHOLDER = "（此条即最终回答，全文见 final_answer）"

_ELLIPSIS = re.compile(r"\.{3,}|…+")
_EDGE_MARKS = " \t\r\n\"'`“”‘’「」『』《》()（）[]【】。，、,.;；:：!！?？*"
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Evidence:
    """What the judge is shown of one trace, by section (``SECTIONS``), each a verbatim text."""

    sections: dict[str, str]
    trace_id: str
    history_messages: int

    @cached_property
    def hash(self) -> str:
        """Identity of the evidence (SHA-256 prefix of its canonical JSON): the trace part of a judge key."""
        return content_hash([[name, self.sections.get(name, "")] for name in SECTIONS], length=32)

    @property
    def final_answer(self) -> str:
        """The agent's final answer (``NO_FINAL_ANSWER`` when it gave none)."""
        return self.sections["final_answer"]

    def render(self) -> str:
        """The sections as tagged blocks, for the prompt: ``<history>...</history>`` etc."""
        parts = []
        for name in SECTIONS:
            text = self.sections.get(name)
            if text is None:
                continue
            parts.append(f"<{name} title=\"{SECTION_TITLES[name]}\">\n{text}\n</{name}>")
        return "\n\n".join(parts)

    @cached_property
    def _normalized(self) -> dict[str, str]:
        return {name: _normalize(text) for name, text in self.sections.items()}

    def locate(self, quote: str) -> str | None:
        """The first section (in ``SECTIONS`` order, final answer first) where ``quote`` occurs, or None.

        A quote may elide with ``...`` / ``…``: its fragments must then occur in that order in one section.
        """
        fragments = [_normalize(part) for part in _ELLIPSIS.split(quote)]
        fragments = [part for part in fragments if part]
        if not fragments or sum(len(part) for part in fragments) < 2:
            return None
        for name in ("final_answer", "steps", "history", "system"):
            text = self._normalized.get(name)
            if text is not None and _in_order(fragments, text):
                return name
        return None


def normalize_quote(text: str) -> str:
    """The form quotes and evidence are compared in: NFKC, no whitespace, no quote marks at the ends."""
    return _normalize(text)


def collect_evidence(case: Case, trace: Trace) -> Evidence:
    """The evidence of ``trace`` run as ``case``: history boundary from the case input (K messages)."""
    boundary = history_length(case)
    final = final_answer_message(trace, boundary)
    system: list[str] = []
    history: list[str] = []
    steps: list[str] = []
    for record in trace.records:
        if record.kind == "system_message":
            system.append(_content(record.content))
            continue
        index = getattr(record, "message_index", None)
        target = history if index is not None and index < boundary else steps
        line = _render_record(record, final)
        if line is not None:
            target.append(line)
    sections = {
        "history": "\n".join(history) or "（无：用例没有注入历史）",
        "steps": "\n".join(steps) or "（无：agent 在历史之后没有任何动作）",
        "final_answer": final.text if final is not None else NO_FINAL_ANSWER,
    }
    if system:
        sections = {"system": "\n\n".join(system), **sections}
    return Evidence(sections=sections, trace_id=trace.trace_id, history_messages=boundary)


def _render_record(record: Any, final: AssistantMessage | None) -> str | None:
    # Records are told apart by kind: analysis may hand over the read-only mirrors (tracekit.trace.mirror).
    kind = record.kind
    if kind == "user_message":
        return f"[用户] {_content(record.content)}"
    if kind == "assistant_message":
        if record is final:
            return f"[助手] {FINAL_ANSWER_PLACEHOLDER}"
        text = record.text
        return f"[助手] {text}" if text else None
    if kind == "tool_call":
        arguments = record.input if record.input_parse_error else json.dumps(record.input, ensure_ascii=False)
        return f"[工具调用 #{record.index}] {record.name} 参数：{arguments}"
    if kind == "tool_result":
        marks = []
        if record.is_error:
            marks.append("错误 is_error=true")
        if record.injected:
            marks.append("由用例拦截注入")
        label = f"#{record.call_index}" if record.call_index is not None else "(未配对)"
        name = f" {record.name}" if record.name else ""
        text = _content(record.content)
        shown = text if text.strip() else EMPTY_RESULT
        suffix = f"（{'，'.join(marks)}）" if marks else ""
        return f"[工具结果 {label}{name}]{suffix} {shown}"
    if kind == "error":
        status = f" HTTP {record.status}" if record.status is not None else ""
        return f"[错误 {record.source}{status}] {record.message}"
    return None


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                parts.append(str(block.get("text", "")))
            elif kind == "image":
                parts.append("[图片]")
            elif kind == "tool_result":
                parts.append(_content(block.get("content")))
            elif kind in ("thinking", "redacted_thinking"):
                continue
            else:
                parts.append(json.dumps(block, ensure_ascii=False))
    return "\n".join(parts)


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace('\\"', '"')
    return _SPACE.sub("", text).strip(_EDGE_MARKS)


def _in_order(fragments: list[str], text: str) -> bool:
    position = 0
    for fragment in fragments:
        found = text.find(fragment, position)
        if found < 0:
            return False
        position = found + len(fragment)
    return True
