"""Offline analysis of traces: call graph, detectors, case checks, the seeds' scores, failure attribution.

Entry points: ``analyze_trace`` (one loaded trace -> its ``traces[]`` entry), ``write_results`` /
``build_results`` (files -> the results document, ``Results``: the typed analyze JSON, read back with
``read_results_file``; its JSON Schema is ``tracekit schema results``), and the parts on their own: ``build_graph``,
``run_detectors`` (with ``@detector`` to add one), ``evaluate_expect`` and ``build_verdict`` on a
``CaseRun``. Heavier dependencies (the case library, tiktoken, networkx, the judge) load only when used.
"""

from tracekit.analyze.binding import CaseRun, bind_case, history_length
from tracekit.analyze.checks import Check, evaluate_expect
from tracekit.analyze.detectors import REGISTRY, DetectorContext, Finding, detector, resolve_options, run_detectors
from tracekit.analyze.graph import CallGraph, CallNode, Edge, build_graph, trace_graph
from tracekit.analyze.judge_store import JudgeProvider, find_judge_store
from tracekit.analyze.results import (
    AnalyzeSettings,
    FileOutcome,
    RunOutcome,
    analyze_file,
    analyze_trace,
    build_results,
    trace_paths,
    write_results,
)
from tracekit.analyze.results_model import Results, TraceResult, Verdict, read_results_file
from tracekit.analyze.verdict import JudgeHook, build_verdict

__all__ = [
    "REGISTRY",
    "AnalyzeSettings",
    "CallGraph",
    "CallNode",
    "CaseRun",
    "Check",
    "DetectorContext",
    "Edge",
    "FileOutcome",
    "Finding",
    "JudgeHook",
    "JudgeProvider",
    "Results",
    "RunOutcome",
    "TraceResult",
    "Verdict",
    "analyze_file",
    "analyze_trace",
    "bind_case",
    "build_graph",
    "build_results",
    "build_verdict",
    "detector",
    "evaluate_expect",
    "find_judge_store",
    "history_length",
    "read_results_file",
    "resolve_options",
    "run_detectors",
    "trace_graph",
    "trace_paths",
    "write_results",
]
