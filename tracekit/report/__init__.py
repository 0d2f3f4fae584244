"""Reports of analyze results: HTML for code review, Markdown for a PR comment, JUnit XML for CI.

``write_reports`` writes any of them from a results JSON (``tracekit report`` and ``tracekit analyze
--html/--markdown/--junit`` both call it). Templates live in ``templates/`` and are autoescaped; pages
are self-contained and byte-for-byte deterministic.
"""

from tracekit.report.junit import render_junit
from tracekit.report.markdown import render_markdown
from tracekit.report.run_order import runs_from_results
from tracekit.report.runs import Run
from tracekit.report.svg import GraphEdge, GraphNode, render_call_graph
from tracekit.report.writer import ReportOutcome, ResultsError, read_results, write_reports

__all__ = [
    "GraphEdge",
    "GraphNode",
    "ReportOutcome",
    "ResultsError",
    "Run",
    "read_results",
    "render_call_graph",
    "render_junit",
    "render_markdown",
    "runs_from_results",
    "write_reports",
]
