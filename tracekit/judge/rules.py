"""Judges made of rules: a judge prompt read back into its parts, and a fake upstream that answers it.

A rule-based stand-in is not a model. It exists so that tests and demos can exercise the whole judge path
(prompt, proxy, store, parsing, combining) without a network; label its verdicts as what they are by the
model name it is served under.

A rule receives the prompt read back into its parts and returns the judge's answer (a dict, dumped as
JSON, or a string sent as is)::

    from tracekit.testing import FakeModelClient

    def rule(prompt: JudgePrompt) -> dict | str:
        if "8999" in prompt.final_answer:
            return {"verdict": "fail", "reasons": ["编造了价格"], "quotes": ["8999"]}
        return {"verdict": "pass", "reasons": ["如实告知"], "quotes": [prompt.final_answer[:20]]}

    client = FakeModelClient(rule_judge(rule))   # register it for a prefix (tracekit.clients), or:
    with FakeUpstream(rule_judge(rule)) as upstream:
        ...  # JudgeConfig(model="my-rules", base_url=upstream.url)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

_CASE_ID = re.compile(r'<case id="([^"]+)">')

Rule = Callable[["JudgePrompt"], "dict[str, Any] | str"]


@dataclass(frozen=True)
class JudgePrompt:
    """A judge prompt read back into its parts (the tags of ``tracekit.judge.prompt.USER_TEMPLATE``)."""

    case_id: str
    rubric: str
    criteria: str
    decide: str
    evidence: str
    sections: dict[str, str]
    """Evidence sections by name: system, history, steps, final_answer."""

    @property
    def final_answer(self) -> str:
        return self.sections.get("final_answer", "")

    @property
    def steps(self) -> str:
        return self.sections.get("steps", "")


class _Request(Protocol):
    """What ``rule_judge`` reads of a fake-upstream request."""

    @property
    def body(self) -> Any: ...


def read_prompt(prompt: str) -> JudgePrompt:
    """Split a judge prompt into its parts."""
    match = _CASE_ID.search(prompt)
    evidence = _tag(prompt, "evidence")
    sections = {name: _tag(evidence, name) for name in ("system", "history", "steps", "final_answer")}
    return JudgePrompt(
        case_id=match.group(1) if match else "",
        rubric=_tag(prompt, "rubric"),
        criteria=_tag(prompt, "criteria"),
        decide=_tag(prompt, "decide"),
        evidence=evidence,
        sections={name: text for name, text in sections.items() if text},
    )


def rule_judge(rule: Rule) -> Callable[[_Request], str]:
    """A fake-upstream script function (``tracekit.testing.FakeUpstream``) that answers every judge request
    with ``rule``'s answer, as the text of the reply."""

    def answer(request: _Request) -> str:
        messages = request.body.get("messages") if isinstance(request.body, dict) else None
        prompt = messages[-1]["content"] if messages else ""
        if isinstance(prompt, list):
            prompt = "".join(str(block.get("text", "")) for block in prompt if isinstance(block, dict))
        verdict = rule(read_prompt(str(prompt)))
        return verdict if isinstance(verdict, str) else orjson.dumps(verdict).decode()

    return answer


def _tag(text: str, name: str) -> str:
    match = re.search(rf"<{name}(?:\s[^>]*)?>\n?(.*?)\n?</{name}>", text, re.S)
    return match.group(1) if match else ""
