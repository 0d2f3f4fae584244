"""One trace's ``traces[]`` entry, and the settings every trace of an analysis is analyzed against.

``analyze_trace`` runs the fused detector pass (``detectors.detect``), binds the trace to its case when a
library is given (``binding``, ``verdict``: imported only then) and returns the entry as the results model
(``tracekit.results.TraceResult``), built from what the analysis made without validating it again; the model
writes the entry's JSON (``to_json_bytes``), whatever the trace.

Example::

    entry = analyze_trace(load_trace("recordings/flawed/x.jsonl", fast=True))
    data = entry.to_json_bytes()
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracekit.analyze.detectors import Finding, detect, resolve_options
from tracekit.analyze.diagnosing import diagnose_entry, policy_named, reference_of
from tracekit.analyze.judge_store import DiagnosisJudgeProvider, JudgeProvider
from tracekit.analyze.sources import SourceNames
from tracekit.analyze.tool_side import tool_side_stats
from tracekit.results.model import FindingEntry, GuardEntry, ToolCallEntry, TraceResult
from tracekit.trace import Trace

if TYPE_CHECKING:
    from tracekit.analyze.verdict import JudgeHook
    from tracekit.cases.loader import CaseLibrary, CaseSet

# What only a case library needs (binding, checks, verdicts: the cases' models and YAML) is imported inside
# the functions that use them, when they do: a run without --cases never loads it.


@dataclass(frozen=True)
class AnalyzeSettings:
    """What to analyze traces against (picklable: it travels to worker processes)."""

    library: CaseSet | None = None
    """The case library (``--cases``), loaded once by the application layer (``tracekit.application``); it
    travels with the settings, once to each worker process. None: no case checks."""
    case_id: str | None = None
    """Bind every trace to this case (``--case``) instead of the header's ``case_id``."""
    detector_options: dict[str, dict[str, Any]] | None = None
    """Resolved detector options ({kind: {key: value}}); None: the defaults."""
    judge: JudgeProvider | None = None
    """Makes the judge hook for cases scored by the judge (``judge_store.JudgeProvider``); None: their
    verdicts stay pending."""
    named_files: frozenset[str] = frozenset()
    """Files named one by one (not found in a folder): analyzed even when they are judge exchanges."""
    sources: SourceNames = field(default_factory=SourceNames)
    """How ``source`` and ``trace_file`` name each file (the PATH arguments and the results file's folder)."""
    keep_results: bool = False
    """Keep each entry as a model in its outcome (for reports handed the results in memory)."""
    policy: str | None = None
    """The domain policy (``--policy``: a file's absolute path or a shipped policy's name); None: the schema
    invariants and errors talked past only (``tracekit.diagnose``)."""
    diagnosis_judge: DiagnosisJudgeProvider | None = None
    """Makes the judge over the evidence of diagnosed traces (``--diagnose-model``); None: rules only."""
    expected_actions: str | None = None
    """The expected calls by trace or case id (``--expected-actions``: a file's absolute path); None: only
    what a trace's header carries, read with a policy (``tracekit.diagnose.reference``)."""


_DEFAULT_SETTINGS = AnalyzeSettings()
_OPTIONS: dict[str, dict[str, Any]] | None = None


def run_name(source: str | None, model: str | None) -> str | None:
    """The run a trace belongs to, from its header: what made it (``source``) and with which model.

    Traces of one run of a case library share it, so that (run, case, group) names a task and traces of
    the same task with different ``repeat`` are its repeats; two runs of the library (two models, or a
    reference and a flawed policy) are never mixed.

    >>> run_name("run:policy-x", "policy-x"), run_name("run:reference-agent", "model-x")
    ('run:policy-x', 'run:reference-agent/model-x')
    >>> run_name("proxy", None), run_name(None, "gpt-x"), run_name(None, None)
    ('proxy', 'gpt-x', None)
    """
    if source and model and model not in source:
        return f"{source}/{model}"
    return source or model or None


def analyze_trace(
    trace: Trace,
    settings: AnalyzeSettings | None = None,
    *,
    library: CaseLibrary | CaseSet | None = None,
    judge: JudgeHook | None = None,
) -> TraceResult:
    """The ``traces[]`` entry of one trace: stats, calls, findings and (when bound to a case) the verdict.
    ``library`` (default: ``settings.library``) and ``judge`` (default: ``settings.judge``'s) override the
    settings'.

    Built as the results model's objects from what the analysis made (``ResultModel.built``)."""
    settings = settings or _DEFAULT_SETTINGS
    if judge is None and settings.judge is not None:
        judge = settings.judge()
    if library is None:
        library = settings.library
    header = trace.header
    problems = [str(problem) for problem in trace.problems]
    case = binding = None
    if library is not None:
        # Lazy, with --cases only: the case models (see the imports); binding does not import this module.
        from tracekit.analyze.binding import bind_case, bind_history

        case, problem = bind_case(trace, library.cases, settings.case_id)
        if problem is not None:
            problems.append(problem)
        binding = bind_history(trace, case) if case is not None else None
    if binding is not None and binding.problem is not None:
        problems.append(binding.problem)
    history = binding.messages if binding is not None else 0
    catalog = library.catalog if library is not None else None
    # One fused pass: the call graph is built call by call and every detector is fed as it goes.
    options = settings.detector_options or _default_detector_options()
    graph, findings = detect(trace, options, history_messages=history, catalog=catalog, case=case)
    verdict = None
    if case is not None:
        # Lazy, with --cases only: the case models and the seeds' scoring (see the imports); neither imports this.
        from tracekit.analyze.binding import CaseRun
        from tracekit.analyze.verdict import build_verdict

        run = CaseRun(trace, case, graph, history, catalog, binding.problem if binding is not None else None)
        verdict = build_verdict(run, findings, judge)
        if verdict.scores.tool_use.over_tooling:
            findings.append(
                Finding(
                    "over_tooling",
                    "warning",
                    [node.index for node in run.judged],
                    f"{case.id} is best answered without a tool, but the agent called "
                    f"{', '.join(node.tool for node in run.judged)} (过度工具化); answer directly.",
                )
            )
    policy = policy_named(settings.policy) if settings.policy is not None else None
    reference = reference_of(trace, policy, settings.expected_actions)
    findings, diagnosis = diagnose_entry(trace, findings, verdict, policy, reference)
    if diagnosis is not None and settings.diagnosis_judge is not None:
        judgement = settings.diagnosis_judge()(trace, findings, diagnosis)
        diagnosis = diagnosis.model_copy(update={"judge": judgement})
    path = os.fspath(trace.path) if trace.path is not None else None
    source, trace_file = settings.sources.names(path) if path is not None else (None, None)
    return TraceResult.built(
        trace_id=header.trace_id,
        session=header.session,
        source=source,
        meta=header.meta,
        case_id=case.id if case is not None else header.case_id,
        run=run_name(header.source, header.model),
        group=header.group,
        repeat=header.repeat,
        stats=trace.stats(),
        tool_calls=ToolCallEntry.built_many([{"index": n.index, "name": n.tool, "input": n.arguments,
                                              "is_error": n.is_error, "history": n.history} for n in graph.nodes]),
        findings=FindingEntry.built_many([{"kind": f.kind, "severity": f.severity, "calls": f.calls,
                                           "message": f.message, "context_calls": f.context_calls,
                                           "messages": f.messages} for f in findings]),
        guard=[_guard_entry(record) for record in trace.kind("guard")],
        verdict=verdict,
        diagnosis=diagnosis,
        problems=problems,
        trace_file=trace_file,
        tool_side=tool_side_stats(trace),
    )  # fmt: skip


def _guard_entry(record: Any) -> GuardEntry:
    """A ``guard`` record as its ``traces[].guard`` entry."""
    return GuardEntry.built(kind=record.event, rule=record.rule, action=record.action, severity=record.severity,
                            calls=record.calls, messages=record.messages, figures=record.figures,
                            message=record.message, model_call=record.model_call)  # fmt: skip


def _default_detector_options() -> dict[str, dict[str, Any]]:
    global _OPTIONS
    if _OPTIONS is None:
        _OPTIONS = resolve_options()
    return _OPTIONS
