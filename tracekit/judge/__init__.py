"""The LLM judge: rubric verdicts for the seeds' LLM-judge criteria, kept so that re-analysis is free.

- ``evidence``: what the judge sees of a trace, verbatim (history, tool calls and results, final answer).
- ``prompt``: the versioned template (``TEMPLATE_VERSION``) with the case's rubric and criteria.
- ``verdict``: reading the judge's JSON; unparseable answers and quotes not in the evidence are errors.
- ``transport``: kept answers read straight from the store (a folder or a URL); new judge calls recorded
  into it through the tracekit proxy, in front of the judge model's endpoint (``tracekit.clients``).
- ``judging``: ``CaseJudge`` / ``judged_checks``: judge one case run.
- ``analysis``: ``judge_hook``, the judge as ``tracekit analyze``'s JudgeHook.
- ``combine``: the stricter-of-two verdict of cases scored "auto + LLM-judge".
- ``agreement``: judge vs human labels (agreement, Cohen's kappa, confusion table).
- ``rules``: rule-based stand-in judges for tests and demos: a judge prompt read back into its parts
  (``read_prompt``) and a fake-upstream script answering it with a rule (``rule_judge``).
"""

from tracekit.analyze.combine import combine, combined_verdict, stricter
from tracekit.judge.agreement import AgreementReport, Label, LabelsError, cohens_kappa, compare, load_labels
from tracekit.judge.analysis import JudgeCheck, judge_hook
from tracekit.judge.evidence import Evidence, collect_evidence
from tracekit.judge.judging import (
    CHECK_NAME,
    DEFAULT_STORE,
    CaseJudge,
    JudgeConfig,
    JudgedCheck,
    JudgeError,
    judge_client,
    judged_checks,
)
from tracekit.judge.prompt import TEMPLATE_VERSION, JudgeRequest, build_request
from tracekit.judge.rules import JudgePrompt, read_prompt, rule_judge
from tracekit.judge.transport import JudgeCallError, JudgeTransport
from tracekit.judge.verdict import SampleVerdict, majority, parse_judge_output

__all__ = [
    "CHECK_NAME",
    "DEFAULT_STORE",
    "TEMPLATE_VERSION",
    "AgreementReport",
    "CaseJudge",
    "Evidence",
    "JudgeCallError",
    "JudgeCheck",
    "JudgeConfig",
    "JudgeError",
    "JudgePrompt",
    "JudgeRequest",
    "JudgeTransport",
    "JudgedCheck",
    "Label",
    "LabelsError",
    "SampleVerdict",
    "build_request",
    "cohens_kappa",
    "collect_evidence",
    "combine",
    "combined_verdict",
    "compare",
    "judge_client",
    "judge_hook",
    "judged_checks",
    "load_labels",
    "majority",
    "parse_judge_output",
    "read_prompt",
    "rule_judge",
    "stricter",
]
