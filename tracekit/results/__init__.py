"""The analyze JSON as one typed model: what ``tracekit analyze`` writes and every reader reads.

``tracekit.results.model`` holds the document (``Results``, one ``TraceResult`` per trace, its findings,
checks and verdict), ``tracekit.results.summary`` its ``summary`` (``ResultsSummary``), and
``tracekit.results.base`` how every model reads, writes and describes itself. Detectors, checks and
verdicts build these objects; the report, diff, tables, export and the pytest plugin read a results file
through ``read_results_file``; ``tracekit schema results`` prints ``results_schema()``.

Example::

    from tracekit.results import read_results_file

    results = read_results_file("reports/demo/results.json")
    failing = [trace.case_id for trace in results.traces if trace.result == "fail"]
"""

from tracekit.results.base import ResultModel
from tracekit.results.model import (
    CheckEntry,
    FindingEntry,
    GuardEntry,
    Results,
    ToolCallEntry,
    TraceResult,
    Verdict,
    parse_results,
    read_results_file,
    results_schema,
)
from tracekit.results.summary import ResultsSummary, VerdictCounts

__all__ = [
    "CheckEntry",
    "FindingEntry",
    "GuardEntry",
    "ResultModel",
    "Results",
    "ResultsSummary",
    "ToolCallEntry",
    "TraceResult",
    "Verdict",
    "VerdictCounts",
    "parse_results",
    "read_results_file",
    "results_schema",
]
