"""A scripted judge: rules in Python that answer judge prompts, served by the scripted fake upstream.

It is not a model. It exists so that tests and demos can exercise the whole judge path (prompt, proxy,
store, parsing, combining) without a network, and it must always be labelled as what it is: use the model
name ``SCRIPTED_MODEL`` (``scripted:judge``) so that nobody mistakes its verdicts for a real model's.

A rule receives the prompt read back into its parts and returns the judge's answer (a dict, dumped as
JSON, or a string sent as is)::

    def rule(prompt: ScriptedPrompt) -> dict | str:
        if "8999" in prompt.final_answer:
            return {"verdict": "fail", "reasons": ["编造了价格"], "quotes": ["8999"]}
        return {"verdict": "pass", "reasons": ["如实告知"], "quotes": [prompt.final_answer[:20]]}

    with FakeUpstream(scripted_judge(rule)) as upstream:
        ...  # JudgeConfig(model=SCRIPTED_MODEL, base_url=upstream.url)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from tracekit.testing import FakeRequest, Reply

#: The model name scripted verdicts are made and kept under.
SCRIPTED_MODEL = "scripted:judge"

_CASE_ID = re.compile(r'<case id="([^"]+)">')


@dataclass(frozen=True)
class ScriptedPrompt:
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


def read_prompt(prompt: str) -> ScriptedPrompt:
    """Split a judge prompt into its parts."""
    match = _CASE_ID.search(prompt)
    evidence = _tag(prompt, "evidence")
    sections = {name: _tag(evidence, name) for name in ("system", "history", "steps", "final_answer")}
    return ScriptedPrompt(
        case_id=match.group(1) if match else "",
        rubric=_tag(prompt, "rubric"),
        criteria=_tag(prompt, "criteria"),
        decide=_tag(prompt, "decide"),
        evidence=evidence,
        sections={name: text for name, text in sections.items() if text},
    )


def scripted_judge(rule: Callable[[ScriptedPrompt], dict[str, Any] | str]) -> Callable[[FakeRequest], Reply]:
    """A FakeUpstream script function that answers every judge request with ``rule``'s answer."""
    from tracekit.testing import text_reply

    def answer(request: FakeRequest) -> Reply:
        messages = request.body.get("messages") if isinstance(request.body, dict) else None
        prompt = messages[-1]["content"] if messages else ""
        if isinstance(prompt, list):
            prompt = "".join(str(block.get("text", "")) for block in prompt if isinstance(block, dict))
        verdict = rule(read_prompt(str(prompt)))
        text = verdict if isinstance(verdict, str) else orjson.dumps(verdict).decode()
        return text_reply(text)

    return answer


def _tag(text: str, name: str) -> str:
    match = re.search(rf"<{name}(?:\s[^>]*)?>\n?(.*?)\n?</{name}>", text, re.S)
    return match.group(1) if match else ""
