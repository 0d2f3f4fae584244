"""One trace's ``traces[]`` entry, and the settings every trace of an analysis is analyzed against.

``trace_entry`` runs the fused detector pass (``detectors.detect``), binds the trace to its case when a library
is given (``binding``, ``verdict``: imported only then) and returns the entry as plain values, keys in the
order of ``results_model.TraceResult``. ``analyze_trace`` validates it into that model; ``entry_json`` writes
the entry of a trace bound to no case straight from the plain values, the bytes the model would write (the
analysis of a folder without a case library does, and never loads the results models).

Example::

    entry = trace_entry(load_trace("recordings/flawed/x.jsonl", fast=True))
    data = entry_json(entry)                       # == analyze_trace(...).to_json_bytes()
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from tracekit.analyze.detectors import Finding, detect, resolve_options
from tracekit.analyze.diagnosing import diagnose_entry, policy_named
from tracekit.analyze.json_model import JSON_OPTIONS
from tracekit.analyze.judge_store import JudgeProvider
from tracekit.analyze.sources import SourceNames
from tracekit.trace import Trace

if TYPE_CHECKING:
    from tracekit.analyze.results_model import TraceResult
    from tracekit.analyze.verdict import JudgeHook
    from tracekit.cases.loader import CaseLibrary

# What only a case library needs (binding, checks, verdicts: the cases' models and YAML) and the results
# models (validating an entry) are imported inside the functions that use them, when they do: a run
# without --cases never loads them, which is a third of analyze's start-up.


@dataclass(frozen=True)
class AnalyzeSettings:
    """What to analyze traces against (picklable: it travels to worker processes)."""

    cases_dir: str | None = None
    """Case library directory (``--cases``); None: no case checks."""
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


def load_library(cases_dir: str | Path) -> CaseLibrary:
    """The case library of ``cases_dir`` (a folder or URL), loaded once per process (``binding.load_library``)."""
    from tracekit.analyze.binding import load_library as load  # with --cases only (see the note at the imports)

    return load(cases_dir)


def analyze_trace(
    trace: Trace,
    settings: AnalyzeSettings | None = None,
    *,
    library: CaseLibrary | None = None,
    judge: JudgeHook | None = None,
) -> TraceResult:
    """The ``traces[]`` entry of one trace: stats, calls, findings and (when bound to a case) the verdict."""
    from tracekit.analyze.results_model import TraceResult  # the results models (see the note at the imports)

    return TraceResult.model_validate(trace_entry(trace, settings, library=library, judge=judge))


def trace_entry(
    trace: Trace,
    settings: AnalyzeSettings | None = None,
    *,
    library: CaseLibrary | None = None,
    judge: JudgeHook | None = None,
) -> dict[str, Any]:
    """``analyze_trace`` before validation: every key of a ``TraceResult`` in its order, as plain values (the
    verdict as ``build_verdict`` makes it, the guard records as entries with every key)."""
    settings = settings or _DEFAULT_SETTINGS
    if judge is None and settings.judge is not None:
        judge = settings.judge()
    if library is None and settings.cases_dir is not None:
        library = load_library(settings.cases_dir)
    header = trace.header
    problems = [str(problem) for problem in trace.problems]
    case = binding = None
    if library is not None:
        from tracekit.analyze.binding import bind_case, bind_history  # with --cases only (see the imports)

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
        from tracekit.analyze.binding import CaseRun  # with --cases only (see the imports)
        from tracekit.analyze.verdict import build_verdict

        run = CaseRun(trace, case, graph, history, catalog, binding.problem if binding is not None else None)
        verdict = build_verdict(run, findings, judge)
        if verdict["scores"]["tool_use"]["over_tooling"]:
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
    findings, diagnosis = diagnose_entry(trace, findings, verdict, policy)
    stats = trace.stats()
    path = os.fspath(trace.path) if trace.path is not None else None
    return {
        "trace_id": header.trace_id,
        "session": header.session,
        "source": settings.sources.source(path) if path is not None else None,
        "meta": header.meta,
        "case_id": case.id if case is not None else header.case_id,
        "run": run_name(header.source, header.model),
        "group": header.group,
        "repeat": header.repeat,
        "stats": {
            "llm_calls": stats.llm_calls,
            "tool_calls": stats.tool_calls,
            "tool_errors": stats.tool_errors,
            "input_tokens": stats.input_tokens,
            "output_tokens": stats.output_tokens,
        },
        "tool_calls": [
            {"index": n.index, "name": n.tool, "input": n.arguments, "is_error": n.is_error, "history": n.history}
            for n in graph.nodes
        ],
        "findings": [finding.to_dict() for finding in findings],
        "guard": [_guard_entry(record) for record in trace.kind("guard")],
        "verdict": verdict,
        "diagnosis": diagnosis,
        "problems": problems,
        "trace_file": settings.sources.trace_file(path) if path is not None else None,
    }  # fmt: skip


_OMITTED_IF_NONE = ("trace_file", "diagnosis")


def entry_json(entry: dict[str, Any]) -> bytes:
    """The JSON of a ``trace_entry`` of a trace bound to no case, as its validated ``TraceResult`` writes it
    (``to_json_bytes``), without validating it: the keys the model leaves out when empty are left out here
    (``guard``, ``trace_file``, ``diagnosis``; a guard entry's ``severity`` and ``messages``), every other value
    is already of its field's type. Raises ``ValueError`` for an entry with a verdict (validate that one)."""
    if entry["verdict"] is not None:
        raise ValueError("an entry with a verdict is written through its model (analyze_trace)")
    plain = {key: value for key, value in entry.items()
             if not ((key in _OMITTED_IF_NONE and value is None) or (key == "guard" and not value))}  # fmt: skip
    if "guard" in plain:
        plain["guard"] = [_written_guard(guard) for guard in plain["guard"]]
    return orjson.dumps(plain, option=JSON_OPTIONS)


def _written_guard(guard: dict[str, Any]) -> dict[str, Any]:
    """A guard entry as ``GuardEntry`` writes it: ``severity`` left out when None, ``messages`` when empty."""
    return {key: value for key, value in guard.items()
            if not ((key == "severity" and value is None) or (key == "messages" and not value))}  # fmt: skip


def _guard_entry(record: Any) -> dict[str, Any]:
    """A ``guard`` record as its ``traces[].guard`` entry."""
    return {"kind": record.event, "rule": record.rule, "action": record.action, "severity": record.severity,
            "calls": record.calls, "messages": record.messages, "figures": record.figures, "message": record.message,
            "model_call": record.model_call}  # fmt: skip


def _default_detector_options() -> dict[str, dict[str, Any]]:
    global _OPTIONS
    if _OPTIONS is None:
        _OPTIONS = resolve_options()
    return _OPTIONS
