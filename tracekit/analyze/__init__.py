"""Offline analysis of traces: call graph, detectors, case checks, the seeds' scores, failure attribution.

Entry points: ``analyze_trace`` (one loaded trace -> its ``traces[]`` entry), ``write_results`` /
``build_results`` (files -> the results document), ``build_graph`` and ``run_detectors`` for use on
their own. Modules import their heavier dependencies (cases, tiktoken, networkx) only when used.
"""

from tracekit.analyze.graph import CallGraph, CallNode, Edge, build_graph
from tracekit.analyze.results import (
    AnalyzeSettings,
    FileOutcome,
    RunOutcome,
    analyze_file,
    analyze_trace,
    build_results,
    write_results,
)

__all__ = [
    "AnalyzeSettings",
    "CallGraph",
    "CallNode",
    "Edge",
    "FileOutcome",
    "RunOutcome",
    "analyze_file",
    "analyze_trace",
    "build_graph",
    "build_results",
    "write_results",
]
