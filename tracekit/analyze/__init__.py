"""Offline analysis of traces: call graph, detectors, case checks, the seeds' scores, failure attribution.

Entry points: ``analyze_trace`` (one loaded trace -> its ``traces[]`` entry), ``write_results`` /
``build_results`` (files -> the results document, ``Results``: the typed analyze JSON, read back with
``read_results_file``; its JSON Schema is ``tracekit schema results``), and the parts on their own: ``build_graph``,
``run_detectors`` (with ``@detector`` to add one), ``evaluate_expect`` and ``build_verdict`` on a
``CaseRun``. Heavier dependencies (the case library, tiktoken, networkx, the judge) load only when used.
"""

import importlib
from typing import TYPE_CHECKING, Any

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
    "CaseRun": "binding", "bind_case": "binding", "history_length": "binding",
    "Check": "checks", "evaluate_expect": "checks",
    "REGISTRY": "detectors", "DetectorContext": "detectors", "Finding": "detectors", "detector": "detectors",
    "resolve_options": "detectors", "run_detectors": "detectors",
    "CallGraph": "graph", "CallNode": "graph", "Edge": "graph", "build_graph": "graph", "trace_graph": "graph",
    "JudgeProvider": "judge_store", "find_judge_store": "judge_store",
    "AnalyzeSettings": "results", "FileOutcome": "results", "RunOutcome": "results", "analyze_file": "results",
    "analyze_trace": "results", "build_results": "results", "trace_paths": "results", "write_results": "results",
    "Results": "tracekit.results.model", "TraceResult": "tracekit.results.model",
    "Verdict": "tracekit.results.model", "read_results_file": "tracekit.results.model",
    "JudgeHook": "verdict", "build_verdict": "verdict",
}  # fmt: skip

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home if "." in home else f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
