"""A judge over the evidence: a model names the critical step of a failed trace (``--diagnose-model``).

After AgentRx (Barke et al. 2026, arXiv 2602.02475): the judge gets the trace (every message, call and
result, numbered by ``message_index``), the validation log (the invariants' violations and the detectors'
findings, with their steps) and the ten-category taxonomy, and answers with one JSON object::

    {"step": 12, "call": 3, "category": "Invalid Invocation", "reason": "..."}

The answer is checked: a step no message has, a call not issued at that step, or a category outside the
taxonomy is an ``error``, never a silent pass. The rule-based diagnosis is not shown to the judge (so that
their agreement means something); it is compared afterwards (``same_step``, ``within_one_step``,
``same_category``). Answers are kept in the judge store like every other verdict (under
``<store>/diagnosis/``, keyed by the canonical request, whose system prompt names ``TEMPLATE_VERSION``), so
re-analysis reads them back and makes no HTTP call.

Its mechanics are tested with scripted replies; how good its answers are depends on the model.

Example::

    judge = DiagnosisJudge(JudgeConfig(model="claude-sonnet-4-5"))
    judgement = judge.judge(trace, findings, diagnosis)     # DiagnosisJudgement
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from tracekit.clients import ModelUse
from tracekit.errors import JudgeCallError
from tracekit.judge.judging import JudgeConfig, JudgePool, judge_client
from tracekit.judge.prompt import ROUTE
from tracekit.judge.transport import JudgeTransport
from tracekit.judge.verdict import response_text
from tracekit.proxy import request_key
from tracekit.results.diagnosis import CATEGORIES, Diagnosis, DiagnosisJudgement
from tracekit.trace import content_text

if TYPE_CHECKING:
    from tracekit.analyze.detectors import Finding
    from tracekit.trace import Trace

#: Bump on any change to the wording or layout below (kept answers are keyed by the request).
TEMPLATE_VERSION = "tracekit-diagnosis-judge-v1"
#: The folder of the judge store its exchanges are kept in.
STORE_FOLDER = "diagnosis"
#: Longest text of one message or result shown to the judge (the rest is cut, and says so).
MAX_TEXT = 2000

SYSTEM = f"""You are tracekit's failure-diagnosis judge (template {TEMPLATE_VERSION}).
A tool-using AI agent failed a task. Find the critical step: the first step where the run went wrong in a way
it never recovered from. Read only the trace and the validation log given; assume nothing else happened.
The validation log lists rules the run broke, found by program; it may be incomplete or name later symptoms.
Categories (AgentRx taxonomy; use one exactly as written):
{chr(10).join(f"- {category}" for category in CATEGORIES)}
Answer with one JSON object and nothing else:
{{"step": <the [step N] number>, "call": <the call #i at that step, or null>, "category": "<category>",
"reason": "<one or two sentences>"}}"""

DiagnosisHook = Callable[["Trace", "list[Finding]", Diagnosis], DiagnosisJudgement]


def render_trace(trace: Trace) -> tuple[str, dict[int, set[int]]]:
    """The trace as the judge reads it, and the steps it may name: {message_index: call indexes there}."""
    lines: list[str] = []
    steps: dict[int, set[int]] = {}
    for record in trace.records:
        kind = record.kind
        if kind == "system_message":
            lines.append(f"[system prompt] {_cut(content_text(record.content))}")
        elif kind in ("user_message", "assistant_message"):
            role = kind.removesuffix("_message")
            text = content_text(record.content) if kind != "assistant_message" else "".join(
                block.get("text", "") for block in record.content if block.get("type") == "text")
            steps.setdefault(record.message_index, set())
            if text.strip():
                lines.append(f"[step {record.message_index}] {role}: {_cut(text)}")
        elif kind == "tool_call":
            steps.setdefault(record.message_index, set()).add(record.index)
            arguments = orjson.dumps(record.input).decode() if record.input is not None else "{}"
            lines.append(f"[step {record.message_index}] call #{record.index} {record.name}({_cut(arguments)})")
        elif kind == "tool_result":
            steps.setdefault(record.message_index, set())
            error = " (error)" if record.is_error else ""
            lines.append(f"[step {record.message_index}] result of call #{record.call_index}{error}: "
                         f"{_cut(content_text(record.content))}")  # fmt: skip
    return "\n".join(lines), steps


def validation_log(findings: list[Finding]) -> str:
    """The violations and findings, one line each with the steps and calls they name."""
    lines = []
    for finding in findings:
        where = ", ".join([*(f"step {m}" for m in finding.messages), *(f"call #{c}" for c in finding.calls)])
        lines.append(f"- {finding.kind} ({finding.severity}{'; ' + where if where else ''}): {finding.message}")
    return "\n".join(lines) or "(nothing found by program)"


def build_request(trace: Trace, findings: list[Finding], config: JudgeConfig, model: str) -> dict[str, Any]:
    """The Messages API body for ``trace``."""
    text, _ = render_trace(trace)
    user = f"<trace>\n{text}\n</trace>\n\n<validation_log>\n{validation_log(findings)}\n</validation_log>\n\n" \
           "Name the critical step. Answer with the JSON object only."  # fmt: skip
    body: dict[str, Any] = {"model": model, "max_tokens": config.max_tokens, "system": SYSTEM,
                            "messages": [{"role": "user", "content": user}]}  # fmt: skip
    if config.temperature is not None:
        body["temperature"] = config.temperature
    return body


def read_answer(text: str, steps: dict[int, set[int]]) -> tuple[int, int | None, str, str]:
    """(step, call, category, reason) of a judge's answer; ``ValueError`` saying what is wrong with it."""
    start, end = text.find("{"), text.rfind("}")
    try:
        value = orjson.loads(text[start : end + 1]) if 0 <= start < end else None
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise ValueError("the answer holds no JSON object")
    step, call, category = value.get("step"), value.get("call"), value.get("category")
    if not isinstance(step, int) or isinstance(step, bool) or step not in steps:
        raise ValueError(f"step {step!r} is not a step of the trace")
    if call is not None and (not isinstance(call, int) or isinstance(call, bool) or call not in steps[step]):
        raise ValueError(f"call {call!r} was not issued at step {step}")
    if category not in CATEGORIES:
        raise ValueError(f"category {category!r} is not in the taxonomy")
    reason = value.get("reason")
    return step, call, category, reason if isinstance(reason, str) else ""


class DiagnosisJudge:
    """Asks one judge model for the critical step of failed traces; reuse it for a whole analysis."""

    def __init__(self, config: JudgeConfig, transport: JudgeTransport | None = None) -> None:
        if config.model is None:
            raise ValueError("the diagnosis judge needs a model")
        self.config, self.model = config, config.model
        self.client = judge_client(config.model)
        self.transport = transport or JudgeTransport(config.store, upstream=config.base_url, offline=config.offline,
                                                     api_key=config.api_key, client=self.client)  # fmt: skip

    def judge(self, trace: Trace, findings: list[Finding], diagnosis: Diagnosis) -> DiagnosisJudgement:
        """The judge's critical step of ``trace``, compared with ``diagnosis`` (the rule-based one)."""
        body = build_request(trace, findings, self.config, self.model)
        key = request_key(ROUTE, body)
        base: dict[str, Any] = {"model": self.model, "template": TEMPLATE_VERSION, "request_key": key}
        kept = self.transport.kept(key) > 0
        declined = None if kept else self.client.declines(ModelUse("judge"))
        if not kept and (self.config.offline or declined):
            why = declined or "no kept judgement for this trace; judged offline"
            return DiagnosisJudgement(status="pending", source="none", reason=why, **base)
        try:
            response = self.transport.send(body, session=f"judge-diagnosis-{key[:12]}-s0", case_id=STORE_FOLDER,
                                           kept=kept, meta={"template": TEMPLATE_VERSION,
                                                            "judged_trace": trace.header.trace_id})  # fmt: skip
        except JudgeCallError as exc:
            return DiagnosisJudgement(status="error", source="none", reason=str(exc), **base)
        source = "kept" if kept else "new"
        try:
            step, call, category, reason = read_answer(response_text(response), render_trace(trace)[1])
        except ValueError as exc:
            return DiagnosisJudgement(status="error", source=source, reason=f"unusable answer: {exc}", **base)
        rule = diagnosis.step
        return DiagnosisJudgement(
            status="judged", source=source, step=step, call=call, category=category, reason=reason,
            same_step=step == rule, within_one_step=rule is not None and abs(step - rule) <= 1,
            same_category=category == diagnosis.category, **base,
        )  # fmt: skip

    def close(self) -> None:
        """Close the judge model's endpoint."""
        self.transport.close()


_JUDGES = JudgePool(DiagnosisJudge)


def diagnosis_hook(config: JudgeConfig) -> DiagnosisHook:
    """The hook analysis calls for each diagnosed trace (one ``DiagnosisJudge`` per process); a
    ``functools.partial`` of this is the picklable provider of ``AnalyzeSettings.diagnosis_judge``."""

    def hook(trace: Trace, findings: list[Finding], diagnosis: Diagnosis) -> DiagnosisJudgement:
        return _JUDGES.get(config).judge(trace, findings, diagnosis)

    return hook


def close_diagnosis_judges() -> None:
    """Stop the judges this process made."""
    _JUDGES.close()


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else f"{text[:MAX_TEXT]}... [{len(text) - MAX_TEXT} more characters]"
