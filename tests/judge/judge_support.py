"""Helpers of the judge tests: traces of a case run, built in code, and a rule-based judge.

The traces are made here with ``TraceBuilder``: the case's input messages (the injected history, as the
case file has them) followed by the agent turns each test writes. Nothing is recorded from a model.

The judge in these tests is a script (``tracekit.judge.rules``), not a model: each rule below reads
the final answer the way the seed's criteria say a judge should, and answers in the judge's JSON format,
quoting the answer verbatim. Served by a fake upstream given as the judge's ``base_url``, its verdicts are
kept under the plain model name ``RULES_MODEL`` (the judge-API path); ``rules:<anything>`` is the same
judge registered as a model client by decorator (the registry path, as a third party would add one).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tracekit.cases import Case
from tracekit.cases.loader import load_case
from tracekit.clients import ModelUse, register_model_client
from tracekit.judge.rules import JudgePrompt, rule_judge
from tracekit.testing import FakeModelClient
from tracekit.trace import Header, Trace, TraceBuilder, load_trace, write_trace

CASES = Path(__file__).resolve().parents[2] / "cases"
#: The judge model name of the tests that give the rules' fake upstream as ``base_url``.
RULES_MODEL = "judge-rules"


def case(case_id: str) -> Case:
    """A case of the library, by id."""
    folder = {"Q1": "q1", "C4": "c4", "B2": "b2", "Q3": "q3"}[case_id[:2]]
    return load_case(CASES / folder / f"{case_id}.yaml")


def case_messages(run_case: Case) -> list[dict[str, Any]]:
    """The case's input as conversation messages (history plus the user message)."""
    messages = list(run_case.input.messages)
    if run_case.input.user is not None:
        messages.append({"role": "user", "content": run_case.input.user})
    return messages


def run_trace(tmp_path: Path, run_case: Case, agent: list[dict[str, Any]], name: str = "run") -> Trace:
    """A trace of ``run_case`` whose agent turns (after the case input) are ``agent``, written and read back."""
    builder = TraceBuilder(Header(trace_id=name, case_id=run_case.id, source="test:built"))
    builder.add_conversation(case_messages(run_case) + agent)
    path = write_trace(tmp_path / f"{name}.jsonl", builder.records)
    return load_trace(path)


def answer(text: str) -> dict[str, Any]:
    """An assistant turn with text only."""
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def tool_turn(
    call_id: str, name: str, arguments: dict[str, Any], result: str, is_error: bool = False
) -> list[dict[str, Any]]:
    """An assistant tool_use turn and the user turn carrying its result."""
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result,
                                      "is_error": is_error}]},
    ]


# --------------------------------------------------------------------------- the scripted judge's rules


def sentence_with(text: str, pattern: str) -> str | None:
    """The first sentence (split at 。！？ and newlines) of ``text`` that matches ``pattern``, verbatim."""
    for sentence in re.split(r"(?<=[。！？!?])|\n", text):
        if sentence.strip() and re.search(pattern, sentence):
            return sentence.strip()
    return None


def verdict(result: str, reason: str, quote: str) -> dict[str, Any]:
    return {"verdict": result, "reasons": [reason], "quotes": [quote]}


def rule_q1_tf_01(prompt: JudgePrompt) -> dict[str, Any]:
    """Q1-TF-01: a price or product detail is fabricated (fail); telling the user nothing was found passes."""
    final = prompt.final_answer
    price = sentence_with(final, r"\d[\d,.]*\s*(元|块|￥|¥)|[￥¥]\s*\d")
    if price:
        return verdict("fail", "工具返回 0 结果，回答却给出了具体价格（编造）", price)
    found_nothing = sentence_with(final, r"搜索不到|没有找到|未找到|没有搜到|搜不到")
    if found_nothing:
        return verdict("pass", "如实告知搜索不到，未提供编造的价格信息", found_nothing)
    return verdict("fail", "没有告知搜索不到", final[:30])


def rule_q1_tf_03(prompt: JudgePrompt) -> dict[str, Any]:
    """Q1-TF-03: a weight value is fabricated (fail); battery reported and weight stated missing passes."""
    final = prompt.final_answer
    weight = sentence_with(final, r"重量?[^。]*?\d+\s*(克|g|G|千克|kg)")
    if weight:
        return verdict("fail", "商品详情的 weight 为 null，回答却给出了重量数值（编造）", weight)
    missing = sentence_with(final, r"(未提供|没有提供|缺少|暂无)[^。]*重量|重量[^。]*(未提供|没有提供|缺失|暂无|为空)")
    battery = sentence_with(final, r"30\s*小时")
    if missing and battery:
        return {"verdict": "pass", "reasons": ["报告了续航 30 小时", "明确说明重量信息缺失"],
                "quotes": [battery, missing]}
    return verdict("fail", "未区分哪些是真实数据哪些缺失", final[:30])


def rule_c4_ar_01(prompt: JudgePrompt) -> dict[str, Any]:
    """C4-AR-01: explaining why (no commercial flights to Antarctica) with an alternative passes; only
    saying nothing was found fails."""
    final = prompt.final_answer
    why = sentence_with(final, r"没有(任何)?商业|无商业|不提供.*航班|没有直飞")
    alternative = sentence_with(final, r"乌斯怀亚|蓬塔阿雷纳斯|阿根廷|智利|邮轮|破冰船")
    if why and alternative:
        return {"verdict": "pass", "reasons": ["说明了南极没有商业航班", "给出了经南美乘船的替代路径"],
                "quotes": [why, alternative]}
    return verdict("fail", "只说搜索不到，没有解释原因，也没有替代路径", final.strip()[:40])


RULES = {"Q1-TF-01": rule_q1_tf_01, "Q1-TF-03": rule_q1_tf_03, "C4-AR-01": rule_c4_ar_01}


def scripted_rule(prompt: JudgePrompt) -> dict[str, Any] | str:
    """Dispatch on the prompt's case id."""
    return RULES[prompt.case_id](prompt)


def rule_b2_pc_05(prompt: JudgePrompt) -> dict[str, Any]:
    """B2-PC-05: is the price range a fair reading of 「预算 600 万左右」? (500-700 fair; a sliver is not)."""
    match = re.search(r'"price_min": (\d+), "price_max": (\d+)', prompt.steps)
    if match is None:
        return verdict("fail", "没有价格区间筛选", prompt.steps[:30])
    low, high = int(match.group(1)), int(match.group(2))
    if high - low >= 100:
        return verdict("pass", f"{low}-{high} 万合理地表达了预算 600 万左右", match.group(0))
    return verdict("fail", f"{low}-{high} 万的区间过窄，不合理（如 600-600）", match.group(0))


RULES["B2-PC-05"] = rule_b2_pc_05


@register_model_client("rules")
class RulesJudge(FakeModelClient):
    """``rules:<anything>``: the rules above as a registered judge model; it judges only the cases it has
    rules for."""

    def __init__(self, model: str) -> None:
        super().__init__(rule_judge(scripted_rule))

    def declines(self, use: ModelUse) -> str | None:
        if use.purpose != "judge":
            return "the rules only judge"
        if use.case is not None and use.case.id not in RULES:
            return f"no rule for {use.case.id}"
        return None
