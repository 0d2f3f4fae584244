"""The analyze JSON as typed models: the contract of DESIGN.md "Contracts", every field documented.

``tracekit analyze`` writes it (``tracekit.analyze.results``); the HTML, Markdown and JUnit reports, the
pytest plugin and ``tracekit report --baseline`` read it; ``tracekit schema results`` prints its JSON
Schema for other tools. The document::

    {"tracekit": "<version>",
     "traces": [{"trace_id", "session", "source", "meta", "case_id", "run", "group", "repeat", "stats",
                 "tool_calls", "findings", "verdict", "problems", "trace_file"}, ...],
     "problems": ["file:line: what", ...],
     "summary": {...}}                         # tracekit.results.summary.ResultsSummary

Reading is strict about types and tolerant about age: fields added after the first release have defaults
(an older results file still reads), and keys a model does not declare are kept.

Example::

    results = read_results_file("reports/demo/results.json")
    failing = [trace.case_id for trace in results.traces if trace.result == "fail"]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from tracekit.errors import ResultsError, StorageError
from tracekit.results.base import Number, ResultModel, omit_if_empty, omit_if_none
from tracekit.results.summary import ResultsSummary
from tracekit.storage import is_url, local, read_bytes

VerdictResult = Literal["pass", "acceptable", "fail", "pending"]
"""A case verdict: ``pending`` when the case needs the judge and no judged verdict is available."""

CheckResult = Literal["pass", "acceptable", "fail", "pending", "error", "untested", "info"]
"""A check's result: ``untested`` and ``info`` never decide the verdict; ``error`` is an unusable judge answer."""

JudgeState = Literal["not_needed", "kept", "new", "mixed", "judged", "pending", "error"]
"""Where a verdict's judged part came from (``tracekit.analyze.verdict.JUDGE_STATES``)."""


class TraceStats(ResultModel):
    """Counts of one trace."""

    llm_calls: int = Field(description="Model calls (each retried attempt of a turn counted once).")
    tool_calls: int = Field(description="Tool calls, history included.")
    tool_errors: int = Field(description="Tool calls whose result is an error.")
    input_tokens: int = Field(description="Prompt tokens over all model calls, as the provider reported them.")
    output_tokens: int = Field(description="Generated tokens over all model calls.")


class ToolCallEntry(ResultModel):
    """One tool call of the trace (a node of its call graph)."""

    index: int = Field(description="Position of the call in the trace (0-based); findings and checks name it.")
    name: str = Field(description="The tool called.")
    input: Any = Field(description="The call's arguments, as the agent sent them.")
    is_error: bool = Field(description="Whether the tool's result was an error.")
    history: bool = Field(description="True for calls in the case's input history (context, never judged).")


class FindingEntry(ResultModel):
    """A detector finding."""

    kind: str = Field(description="Finding kind: repeated_call, retry_storm, alternating_loop, order_violation, ...")
    severity: str = Field(description="error, warning or info.")
    calls: list[int] = Field(description="Indexes of the judged calls of the pattern.")
    message: str = Field(description="What was found and what to do, in a sentence.")
    context_calls: list[int] = omit_if_empty("History calls that take part in the pattern (left out when none).")
    messages: list[int] = omit_if_empty(
        "message_index of the agent messages that form a pattern in the agent's text (repeated_text; left out "
        "when none)."
    )


class GuardEntry(ResultModel):
    """What the live guard (``tracekit record --guard``) did in the session: a ``guard`` record of the trace."""

    kind: str = Field(description="'finding' (a detector's finding) or 'budget' (a session budget was exceeded).")
    rule: str = Field(description="The finding kind or the budget (tokens, model_calls, tool_calls, seconds, errors).")
    action: str = Field(description="record, warn (a note was added to the next request) or stop.")
    severity: str | None = omit_if_none(description="The finding's severity (findings only).")
    calls: list[int] = Field(default_factory=list, description="Indexes of the tool calls it names.")
    messages: list[int] = omit_if_empty("message_index of the messages it names (left out when none).")
    figures: dict[str, Any] = Field(
        default_factory=dict, description="The numbers behind it: a budget's used and limit; a finding's calls."
    )
    message: str = Field(default="", description="What happened, in a sentence.")
    model_call: int | None = Field(default=None, description="The model call of the request the guard acted on.")


class JudgeQuote(ResultModel):
    """A quote the judge gave, and where in the evidence it was found."""

    text: str = Field(description="The quoted text.")
    found_in: str | None = Field(default=None, description="Evidence section it was found in; null: not found.")


class JudgeDetails(ResultModel):
    """The judge's side of a judged check."""

    model: str | None = Field(default=None, description="Judge model (null: whichever model's kept verdict).")
    template: str | None = Field(default=None, description="Version of the judge prompt template.")
    request_key: str | None = Field(default=None, description="Replay key of the judge request.")
    evidence_hash: str | None = Field(default=None, description="Hash of the evidence the judge was shown.")
    source: str | None = Field(default=None, description="Where the answers came from: kept, new, mixed or none.")
    reasons: list[str] = Field(default_factory=list, description="The judge's reasons.")
    quotes: list[JudgeQuote] = Field(default_factory=list, description="What the judge quoted from the trace.")
    failure_kind: str | None = omit_if_none(description="The seed 004 failure kind the judge named, if any.")
    note: str | None = omit_if_none(description="Why there is no verdict, or how a majority was reached.")
    error: str | None = omit_if_none(description="Why the judge's answer could not be used (result error).")
    answer: str | None = omit_if_none(description="The unusable answer as received (result error).")
    samples: list[dict[str, Any]] | None = omit_if_none(description="Each answer when several were sampled.")
    status: str | None = Field(default=None, description="The judged check's result, repeated here.")


class CheckEntry(ResultModel):
    """One machine or judged check of a case against the trace."""

    check: str = Field(description="What was checked: calls[0]:search_flights, forbidden_tools, judge, ...")
    result: CheckResult = Field(description="The check's result.")
    evidence: str = Field(description="What was seen, in a sentence.")
    calls: list[int] = omit_if_empty("Indexes of the calls the evidence refers to (left out when none).")
    expected: Any = omit_if_none(description="What the case asked for, when the check says.")
    actual: Any = omit_if_none(description="What the agent did instead, when the check says.")
    failure_kind: str | None = omit_if_none(description="Judged checks: the failure kind the judge saw.")
    judge: JudgeDetails | None = omit_if_none(description="Judged checks: model, template, reasons, quotes.")

    @property
    def judged(self) -> bool:
        """Whether the judge made this check."""
        return self.judge is not None


class CaseRef(ResultModel):
    """The case a verdict is for."""

    id: str = Field(description="Case id, e.g. B2-PC-nn.")
    dimension: str = Field(description="Dimension: B2, Q3, Q1, C4 or TT.")
    category: str = Field(description="Category within the dimension, e.g. PC (TT for the traps).")
    scoring: str = Field(description="auto, judge or auto+judge.")


class ToolUseScore(ResultModel):
    """Seed 003's 100-point tool-use score (cases/traps/SCORING.md)."""

    total: Number = Field(description="Sum of the four parts plus the mechanism bonus, at most 100.")
    grade: str = Field(description="优秀 from 80, 合格 from 60, else 不合格.")
    selection: Number = Field(description="Tool selection, 0..40 (best 40, acceptable 30, wrong 0 per call).")
    parameters: Number = Field(description="Parameter accuracy, 0..20.")
    recovery: Number = Field(description="Error recovery, 0..20 (20 when no failure happened: see recovery_state).")
    efficiency: Number = Field(description="Call efficiency, 0..20 (minimal necessary calls / actual calls).")
    mechanism_bonus: Number = Field(description="+5 when the agent retried or fell back after a failure.")
    recovery_state: str = Field(description="tested, untested or untested_with_mechanism.")
    recovery_untested: bool = Field(description="No failure observed and no recovery mechanism seen.")
    has_recovery_mechanism: bool = Field(description="The agent retried or fell back after a failure.")
    selection_breakdown: dict[str, int] = Field(description="Calls per tier: best, acceptable, wrong.")
    over_tooling: bool = Field(description="A tool was called where answering without one is best (过度工具化).")
    none_wrong: bool = Field(description="No tool was called where that is the wrong choice.")
    details: dict[str, Any] = Field(description="Per-part explanations: tiers per call, parameter problems, ...")


class EfficiencyScore(ResultModel):
    """Seed 001's efficiency figures."""

    steps: int = Field(description="Judged tool calls.")
    optimal_steps: int | None = Field(description="The case's theoretical optimum, when known.")
    efficiency_ratio: Number | None = Field(description="steps / optimal_steps (2.0: twice the optimum).")
    redundant_calls: list[int] = Field(description="Calls repeating an earlier successful identical call.")
    redundant_call_rate: Number = Field(description="Redundant calls / steps.")
    output_tokens: int = Field(description="Tokens of the agent's answer.")
    token_method: str = Field(description="How output_tokens was counted: usage, or a tokenizer estimate.")
    optimal_tokens: int | None = Field(description="The case's optimal answer tokens, when known.")
    overall_score: Number | None = Field(description="(optimal/steps) x (optimal/tokens) x 100, when computable.")


class Attribution(ResultModel):
    """Seed 004's failure attribution of a failing verdict."""

    case: str = Field(description="The case id.")
    failure_type: str = Field(description="失败类型, in the seed's words.")
    failure_kind: str = Field(description="The failure kind: loop, deadlock, premature_abandonment, ...")
    family: str = Field(description="stuck, give_up or fabrication (reported side by side, never summed).")
    symptom: str = Field(description="具体表现: what the agent did.")
    root_cause: str = Field(description="根本原因.")
    fix: str = Field(description="修复建议.")
    clause: str | None = Field(default=None, description="The seed clause that decided it, when one did.")
    also: list[str] = Field(default_factory=list, description="Other failure kinds seen in the same trace.")
    evidence: dict[str, Any] = Field(default_factory=dict, description="Which checks and findings showed it.")
    text: str = Field(default="", description="The attribution record as the seed prints it.")


class Scores(ResultModel):
    """The scores of a verdict."""

    tool_use: ToolUseScore = Field(description="Seed 003's tool-use score.")
    efficiency: EfficiencyScore = Field(description="Seed 001's efficiency figures (steps, tokens, ratio).")
    attribution: Attribution | None = omit_if_none(description="Failure attribution (failing verdicts only).")


class VerdictParts(ResultModel):
    """Both parts of a verdict that uses the judge; the verdict is the stricter."""

    auto: VerdictResult | None = Field(description="The machine checks' result (null: a judge-only case).")
    judge: VerdictResult | Literal["error"] | None = Field(description="The judge's result.")
    judge_model: str | None = Field(default=None, description="The judge model.")
    judge_template: str | None = Field(default=None, description="The judge prompt template version.")


class Verdict(ResultModel):
    """The verdict of a trace bound to a case."""

    result: VerdictResult = Field(description="pass, acceptable, fail or pending.")
    case: CaseRef = Field(description="The case judged.")
    dimension: str = Field(description="The case's dimension (as in case.dimension).")
    category: str = Field(description="The case's category (as in case.category).")
    failure_modes: list[str] = Field(default_factory=list, description="Attributed failure kinds (at most one).")
    history_messages: int = Field(default=0, description="Messages of the trace that are the case's input history.")
    checks: list[CheckEntry] = Field(description="The machine checks, in a fixed order.")
    judged_checks: list[CheckEntry] | None = Field(
        default=None, description="The judge's checks; null when the case does not use the judge or none asked."
    )
    judge: JudgeState = Field(default="not_needed", description="Where the judged part came from.")
    scores: Scores = Field(description="Seed 003 and seed 001 scores, and the failure attribution.")
    parts: VerdictParts | None = omit_if_none(description="Both parts, for cases that use the judge.")

    @property
    def all_checks(self) -> list[CheckEntry]:
        """The machine checks, then the judged ones."""
        return [*self.checks, *(self.judged_checks or [])]


class TraceResult(ResultModel):
    """One ``traces[]`` entry: a trace file's analysis."""

    trace_id: str = Field(description="The trace's id (its header's trace_id).")
    session: str | None = Field(description="The x-tracekit-session the trace was recorded under, if any.")
    source: str | None = Field(
        description="The trace file, relative to the folder that holds the PATH argument that found it "
        "(recordings/flawed/x.jsonl from `tracekit analyze recordings`, wherever it runs)."
    )
    meta: dict[str, Any] = Field(default_factory=dict, description="The header's free-form metadata.")
    case_id: str | None = Field(description="The case the trace is bound to, or null.")
    run: str | None = Field(
        default=None, description="What made the trace (header source / model): traces of one run share it."
    )
    group: str | None = Field(default=None, description="Skill group (A or B), if any.")
    repeat: int | None = Field(default=None, description="Repeat index within the run, if any.")
    stats: TraceStats = Field(description="Counts of the trace.")
    tool_calls: list[ToolCallEntry] = Field(description="Every tool call, in order.")
    findings: list[FindingEntry] = Field(description="Detector findings.")
    guard: list[GuardEntry] = omit_if_empty(
        "What the live guard noticed and did while the session was recorded, in order (left out when none)."
    )
    verdict: Verdict | None = Field(description="The case verdict; null for a trace bound to no case.")
    problems: list[str] = Field(default_factory=list, description="Unreadable lines and binding problems.")
    trace_file: str | None = omit_if_none(
        description="Where the report reads the trace file: relative to the folder of the results file (to the "
        "working directory when the results went to standard output), absolute when it cannot be relative."
    )
    tool_side: dict[str, Any] | None = omit_if_none(
        description="What the MCP tool servers really did (``tracekit mcp record``): servers, tool calls, errors, "
        "latency and each call's detail; left out for a trace with no recorded MCP traffic."
    )

    @property
    def result(self) -> VerdictResult | None:
        """The verdict's result; None for a trace bound to no case."""
        return self.verdict.result if self.verdict is not None else None


class Results(ResultModel):
    """The analyze JSON (``tracekit analyze --json``)."""

    tracekit: str = Field(description="Version of tracekit that wrote the file.")
    traces: list[TraceResult] = Field(description="One entry per analyzed trace, in input order.")
    problems: list[str] = Field(default_factory=list, description="Every problem found: file:line: what.")
    summary: ResultsSummary | None = Field(default=None, description="Totals and statistics over the traces.")


def read_results_file(path: str | Path) -> Results:
    """Read an analyze JSON (a path or a URL: ``tracekit.storage``); ``ResultsError`` naming the file (and the
    first bad field) when it is not one."""
    name = str(path) if is_url(path) else str(Path(local(path)))
    try:
        data = read_bytes(path)
    except OSError as exc:
        raise ResultsError(f"{name}: cannot read ({exc.strerror or exc})") from exc
    except StorageError as exc:
        raise ResultsError(str(exc)) from exc
    return parse_results(data, name)


def parse_results(data: bytes | str, name: str = "results") -> Results:
    """Parse analyze JSON text; ``ResultsError`` naming ``name`` when it is not one."""
    try:
        return Results.model_validate_json(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        if error["type"] == "json_invalid":
            raise ResultsError(f"{name}: not JSON ({error['msg']})") from None
        if error["type"] in ("model_type", "model_attributes_type") or where in ("traces", "tracekit"):
            where = where or "top level"
            raise ResultsError(f"{name}: not a tracekit analyze JSON ({where}: {error['msg']})") from None
        raise ResultsError(f"{name}: {where}: {error['msg']} (not a tracekit analyze JSON?)") from None


def results_schema() -> str:
    """The JSON Schema (draft 2020-12) of the analyze JSON, as ``tracekit schema results`` prints it."""
    import json

    document = Results.model_json_schema(by_alias=True)
    document = {"$schema": "https://json-schema.org/draft/2020-12/schema", **document}
    return json.dumps(document, ensure_ascii=False, indent=2)
