"""Offline analysis of traces: stats, call graph, detectors, case checks, scores."""

from tracekit.analyze.results import analyze_trace, build_results

__all__ = ["analyze_trace", "build_results"]
