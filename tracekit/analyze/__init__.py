"""Offline analysis of traces: call graph, detectors, case checks, the seeds' scores, failure attribution.

Entry points: ``analyze_trace`` (one loaded trace -> its ``traces[]`` entry), ``write_results`` /
``build_results`` (files -> the results document, ``Results``: the typed analyze JSON, read back with
``read_results_file``; its JSON Schema is ``tracekit schema results``), and the parts on their own: ``build_graph``,
``run_detectors`` (with ``@detector`` to add one), ``evaluate_expect`` and ``build_verdict`` on a
``CaseRun``. Heavier dependencies (the case library, tiktoken, networkx, the judge) load only when used.
"""

from typing import TYPE_CHECKING

from tracekit.lazy import lazy_exports

if TYPE_CHECKING:
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
    from tracekit.analyze.verdict import JudgeHook, build_verdict
    from tracekit.results.model import Results, TraceResult, Verdict, read_results_file

#: Where each public name is defined: a name is imported on first use (PEP 562), so that importing one part
#: (``tracekit.analyze.results`` for ``tracekit analyze``) does not load the case library, the verdict code
#: and the results models too (a tenth of a second of start-up).
_HOMES = {
    "binding": ["CaseRun", "bind_case", "history_length"],
    "checks": ["Check", "evaluate_expect"],
    "detectors": ["REGISTRY", "DetectorContext", "Finding", "detector", "resolve_options", "run_detectors"],
    "graph": ["CallGraph", "CallNode", "Edge", "build_graph", "trace_graph"],
    "judge_store": ["JudgeProvider", "find_judge_store"],
    "results": [
        "AnalyzeSettings", "FileOutcome", "RunOutcome", "analyze_file", "analyze_trace", "build_results",
        "trace_paths", "write_results",
    ],
    "tracekit.results.model": ["Results", "TraceResult", "Verdict", "read_results_file"],
    "verdict": ["JudgeHook", "build_verdict"],
}

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

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
