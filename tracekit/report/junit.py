"""JUnit XML: one ``<testcase>`` per case × group × repeat (× run, when the results hold several runs: the
name then ends in ``@<run>``), one ``<testsuite>`` per dimension.

The shape follows the JUnit schema CI systems read (Jenkins xunit-plugin ``junit-10.xsd``, which
GitLab, GitHub test reporters and Azure Pipelines also accept): ``testsuites`` > ``testsuite`` (name,
tests, failures, errors, skipped, time) > ``testcase`` (name, classname, time) with ``failure`` or
``skipped`` children and ``system-out``. A fail verdict is a failure (an acceptable one too with
``fail_on="acceptable"``), a pending verdict is skipped, traces bound to no case are not test cases.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from tracekit.report.run_order import sort_runs
from tracekit.report.runs import Run

#: Characters XML 1.0 cannot carry (control characters other than tab, newline, carriage return).
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def failing_results(fail_on: str) -> tuple[str, ...]:
    """Verdict results that count as failures under ``--fail-on``."""
    return ("fail", "acceptable") if fail_on == "acceptable" else ("fail",)


def render_junit(runs: Sequence[Run], fail_on: str = "fail", suite_name: str = "tracekit") -> str:
    """The JUnit XML document (UTF-8 declaration, deterministic order)."""
    failing = failing_results(fail_on)
    cases = sort_runs(run for run in runs if run.case_id is not None and run.result is not None)
    by_dimension: dict[str, list[Run]] = {}
    for run in cases:
        by_dimension.setdefault(run.dimension or "other", []).append(run)
    root = ET.Element("testsuites", name=suite_name)
    totals = {"tests": 0, "failures": 0, "time": 0.0}
    names_seen: set[tuple[str, str]] = set()
    for dimension in sorted(by_dimension):
        members = by_dimension[dimension]
        suite = ET.SubElement(root, "testsuite", name=f"{suite_name}.{dimension}")
        failures = skipped = 0
        suite_time = 0.0
        for run in members:
            testcase = _testcase(suite, run, dimension, names_seen)
            seconds = (run.latency_ms or 0.0) / 1000
            suite_time += seconds
            if run.result in failing:
                failures += 1
                failure = ET.SubElement(testcase, "failure", type=f"tracekit.{run.result}", message=_message(run))
                failure.text = _clean(_failure_text(run))
            elif run.result == "pending":
                skipped += 1
                ET.SubElement(testcase, "skipped", message="pending: the case needs the judge and no verdict is cached")
            out = ET.SubElement(testcase, "system-out")
            out.text = _clean(_system_out(run))
        suite.set("tests", str(len(members)))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", str(skipped))
        suite.set("time", f"{suite_time:.3f}")
        totals["tests"] += len(members)
        totals["failures"] += failures
        totals["time"] += suite_time
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("time", f"{totals['time']:.3f}")
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _testcase(suite: ET.Element, run: Run, dimension: str, names_seen: set[tuple[str, str]]) -> ET.Element:
    classname = f"tracekit.{dimension}.{run.category or dimension}"
    name = run.case_id or run.trace_id
    if run.group:
        name += f"[{run.group}]"
    if run.repeat is not None:
        name += f"#{run.repeat}"
    if run.show_run:
        name += f" @{run.run_short}"
    if (classname, name) in names_seen:
        name += f" ({run.trace_id})"
    names_seen.add((classname, name))
    attributes = {"name": _clean(name), "classname": classname}
    if run.latency_ms is not None:
        attributes["time"] = f"{run.latency_ms / 1000:.3f}"
    return ET.SubElement(suite, "testcase", attributes)


def _message(run: Run) -> str:
    failed = run.failed_checks
    if not failed:
        return _clean(f"verdict {run.result}")
    names = ", ".join(check.name for check in failed[:5])
    return _clean(f"verdict {run.result}: {names}" + (f" (+{len(failed) - 5})" if len(failed) > 5 else ""))


def _failure_text(run: Run) -> str:
    lines = []
    for check in run.checks:
        if check.result in ("fail", "acceptable"):
            lines.append(f"[{check.result}] {check.name}")
            if check.evidence:
                lines.extend("    " + line for line in check.evidence.splitlines()[:20])
    for finding in run.findings:
        lines.append(f"[{finding.severity}] {finding.kind}: {finding.message}")
    return "\n".join(lines) or f"verdict {run.result}"


def _system_out(run: Run) -> str:
    lines = [f"trace: {run.trace_id}", f"verdict: {run.result}"]
    if run.source:
        lines.append(f"file: {run.source}")
    stats = run.stats
    lines.append(
        f"tool calls: {stats.get('tool_calls', 0)} ({stats.get('tool_errors', 0)} errors), "
        f"tokens: {stats.get('input_tokens', 0)} in / {stats.get('output_tokens', 0)} out"
    )
    verdict = run.entry.verdict
    if verdict is not None:  # plain text, not the score objects' reprs: CI shows system-out as is
        tool_use, efficiency = verdict.scores.tool_use, verdict.scores.efficiency
        lines.append(f"tool-use score: {tool_use.total} ({tool_use.grade}), steps: {efficiency.steps}"
                     + ("" if efficiency.optimal_steps is None else f" (optimal {efficiency.optimal_steps})"))
        for check in run.failed_checks[:5]:
            lines.append(f"failed check {check.name}: {check.evidence}")
    return "\n".join(lines)


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)
