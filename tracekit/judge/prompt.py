"""The judge prompt: a versioned template filled with the case's rubric, criteria and the evidence.

The template is part of a kept verdict's identity: change any wording here and bump ``TEMPLATE_VERSION``,
so that verdicts made with the old wording are not reused for the new one (the version string is written
into the system prompt, hence into the canonical request the verdicts are keyed by).

The prompt carries, verbatim: the case's rubric (``judge.rubric``), the seed's Pass / Acceptable / Fail
lines (``criteria``), what the check must decide (``judge.decide``, else the seed's 评分方式 line) and the
evidence (``tracekit.judge.evidence``). The judge answers with one JSON object::

    {"verdict": "pass" | "acceptable" | "fail", "reasons": ["..."], "quotes": ["..."]}

plus, with a fail verdict, an optional ``failure_kind`` (seed 004's failure types, ``FAILURE_KINDS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracekit.cases import Case
    from tracekit.judge.evidence import Evidence

#: Bump on any change to the wording or layout below.
TEMPLATE_VERSION = "tracekit-judge-v1"

#: The verdicts a judge may give. ``acceptable`` is the seeds' middle grade, also for behaviour that meets
#: neither the Pass line nor the Fail line.
VERDICTS: tuple[str, ...] = ("pass", "acceptable", "fail")

#: Failure kinds a judge may name with a fail verdict (seed 004's 失败归因 types; tracekit.analyze.attribution).
FAILURE_KINDS: tuple[str, ...] = ("loop", "deadlock", "premature_abandonment", "unexplained_abandonment", "fabrication")

#: The route the request goes to (Anthropic Messages API), part of the replay key.
ROUTE = "/v1/messages"

SYSTEM_TEMPLATE = "\n".join(
    [
        "你是 tracekit 的评测裁判（模板版本 {version}）。"
        "你评判一个使用工具的 AI agent 在一次会话中的表现是否符合测试用例的判定标准。",
        "",
        "规则：",
        "1. 只依据 <evidence> 中的证据判断。证据是会话原文：注入的历史、agent 的工具调用与工具结果"
        "（包括错误和空结果）、agent 的最终回答。不要假设证据之外发生过什么。",
        "2. 按用例的评分细则（rubric）和判定标准（Pass / Acceptable / Fail，种子原文）判定。"
        "历史中的调用是用例注入的，不评判。",
        '3. verdict 只能是 "pass"、"acceptable" 或 "fail"：符合 Pass 为 pass；命中 Fail 的任一条为 fail；'
        "判定标准给出 Acceptable 且符合时，或既不满足 Pass 也未命中 Fail 时，为 acceptable。",
        "4. quotes 是你判定所依据的证据原文片段，至少一条，逐字从 <evidence> 中复制"
        "（不改写、不翻译、不合并多处；可以只取一句中的一部分）。不要引用评分细则或判定标准。",
        "5. verdict 为 fail 时，可以用 failure_kind 标明失败类型（种子 004 的失败归因）："
        "loop（循环）、deadlock（死锁）、premature_abandonment（过早放弃）、unexplained_abandonment（放弃无说明）、fabrication（编造）；其他情况不填。",
        "6. 只输出一个 JSON 对象，不要输出任何其他文字：",
        '{{"verdict": "pass" | "acceptable" | "fail", "reasons": ["判定理由，每条一句"], "quotes": ["证据原文片段"]}}',
    ]
)

USER_TEMPLATE = """\
<case id="{case_id}">
用例：{case_id} · {title}
评分方式（种子原文）：{scoring_note}
</case>

<rubric>
{rubric}
</rubric>

<criteria>
{criteria}
</criteria>

<decide>
{decide}
</decide>

<evidence>
{evidence}
</evidence>

请按 <decide> 判定，只输出 JSON。"""


@dataclass(frozen=True)
class JudgeRequest:
    """One judge request: the Messages API body and the identity it is kept under."""

    body: dict[str, Any]
    case_id: str
    model: str
    template_version: str
    evidence_hash: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """The user prompt text."""
        content: str = self.body["messages"][0]["content"]
        return content


def criteria_text(case: Case) -> str:
    """The seed's 判定标准, verbatim, one line per grade."""
    criteria = case.criteria
    if criteria is None:
        return "（种子没有给出判定标准；按评分细则判定）"
    lines = [f"Pass：{criteria.pass_}"]
    if criteria.acceptable:
        lines.append(f"Acceptable：{criteria.acceptable}")
    lines.append(f"Fail：{criteria.fail}")
    return "\n".join(lines)


def decide_text(case: Case) -> str:
    """What the judged check must decide: the case's ``judge.decide``, else the seed's 评分方式 line."""
    if case.judge is not None and case.judge.decide:
        return case.judge.decide
    if case.scoring_note:
        return f"按判定标准给出 pass / acceptable / fail（本项评分方式：{case.scoring_note}）"
    return "按判定标准给出 pass / acceptable / fail"


def build_request(
    case: Case, evidence: Evidence, model: str, *, max_tokens: int = 1024, temperature: float | None = 0.0
) -> JudgeRequest:
    """The judge request for ``case`` over ``evidence``. Raises ValueError if the case has no rubric."""
    if case.judge is None:
        raise ValueError(f"case {case.id} has no judge rubric (scoring: {case.scoring})")
    user = USER_TEMPLATE.format(
        case_id=case.id,
        title=case.title,
        scoring_note=case.scoring_note or case.scoring,
        rubric=case.judge.rubric,
        criteria=criteria_text(case),
        decide=decide_text(case),
        evidence=evidence.render(),
    )
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": SYSTEM_TEMPLATE.format(version=TEMPLATE_VERSION),
        "messages": [{"role": "user", "content": user}],
    }
    if temperature is not None:
        body["temperature"] = temperature
    return JudgeRequest(
        body=body,
        case_id=case.id,
        model=model,
        template_version=TEMPLATE_VERSION,
        evidence_hash=evidence.hash,
    )
