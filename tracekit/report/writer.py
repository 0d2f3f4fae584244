"""``write_reports``: the one call that writes the HTML, Markdown and JUnit reports of a results JSON.

Used by ``tracekit report`` and by ``tracekit analyze --html/--markdown/--junit``::

    outcome = write_reports(results, html_dir="reports/html", markdown="reports/summary.md",
                            junit="reports/junit.xml", baseline="old/results.json", cases="cases")
    sys.exit(outcome.exit_status)   # 1 when a verdict fails under fail_on
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tracekit.errors import TracekitError
from tracekit.output import write_text
from tracekit.redact import Redactor
from tracekit.report.case_view import CaseSource, load_case_views
from tracekit.report.compare import compare_groups, diff_baseline
from tracekit.report.html import PAGE_SIZE, TraceLoader, write_html_report
from tracekit.report.junit import failing_results, render_junit
from tracekit.report.markdown import render_markdown
from tracekit.report.runs import Run, runs_from_results, sort_runs
from tracekit.report.summary import pass_hat_k
from tracekit.trace import Trace, load_trace

FAIL_ON = ("fail", "acceptable")


class ResultsError(TracekitError):
    """A results JSON (or baseline) that cannot be read; the message names the file."""


@dataclass
class ReportOutcome:
    """What ``write_reports`` wrote and whether the run fails under ``fail_on``."""

    html: list[Path] = field(default_factory=list)
    """Every HTML file, ``index.html`` first (empty without ``html_dir``)."""
    markdown: Path | None = None
    junit: Path | None = None
    failing: list[Run] = field(default_factory=list)
    """Runs whose verdict fails under ``fail_on``."""

    @property
    def index(self) -> Path | None:
        """The HTML report's entry page."""
        return self.html[0] if self.html else None

    @property
    def exit_status(self) -> int:
        """1 when a verdict fails under ``fail_on``, else 0 (the ``--fail-on`` exit status)."""
        return 1 if self.failing else 0


def write_reports(
    results: Mapping[str, Any] | str | Path,
    html_dir: str | Path | None = None,
    markdown: str | Path | None = None,
    junit: str | Path | None = None,
    baseline: Mapping[str, Any] | str | Path | None = None,
    *,
    cases: CaseSource = None,
    traces_loader: Callable[[str], Trace] | None = None,
    fail_on: str = "fail",
    page_size: int = PAGE_SIZE,
    redactor: Redactor | None = None,
    results_dir: str | Path | None = None,
) -> ReportOutcome:
    """Write the reports asked for and say which verdicts fail.

    - ``results``: the analyze JSON (a dict, or the path of the file).
    - ``html_dir`` / ``markdown`` / ``junit``: where to write each report (None: not written).
    - ``baseline``: an earlier analyze JSON (dict or path); regressions and improvements lead the index
      and the Markdown.
    - ``cases``: the case library (folder, ``CaseLibrary`` or mapping id -> Case) whose expectations the
      case pages show; without it the results' optional ``cases`` object is used, if any.
    - ``traces_loader``: reads a trace file named by ``traces[].source`` (default ``load_trace``;
      a relative path is tried from the working directory, then from ``results_dir``, which defaults
      to the folder of the results file when ``results`` is a path). A trace that cannot be read gets a
      page built from the results alone, saying why.
    - ``fail_on``: ``fail`` or ``acceptable``; decides ``ReportOutcome.failing`` and JUnit failures.

    Every file goes through the redactor (``tracekit.output``). Same input, same bytes.
    """
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {FAIL_ON}, not {fail_on!r}")
    results_name = "results"
    if isinstance(results, (str, Path)):
        results_name = Path(results).name
        if results_dir is None:
            results_dir = Path(results).parent
        results = read_results(results)
    baseline_name = ""
    if isinstance(baseline, (str, Path)):
        baseline_name = Path(baseline).name
        baseline = read_results(baseline)
    elif baseline is not None:
        baseline_name = "baseline"

    runs = sort_runs(runs_from_results(results))
    comparison = compare_groups(runs)
    baseline_diff = diff_baseline(runs, runs_from_results(baseline)) if baseline is not None else None
    pass_k = pass_hat_k(runs)
    outcome = ReportOutcome(failing=[run for run in runs if run.result in failing_results(fail_on)])

    if html_dir is not None:
        outcome.html = write_html_report(
            Path(html_dir),
            runs,
            results=results,
            results_name=results_name,
            cases=load_case_views(cases, results),
            load=_trace_loader(traces_loader or load_trace, results_dir),
            comparison=comparison,
            baseline=baseline_diff,
            baseline_name=baseline_name,
            pass_k=pass_k,
            page_size=page_size,
            redactor=redactor,
        )
    if markdown is not None:
        text = render_markdown(
            runs,
            comparison=comparison,
            baseline=baseline_diff,
            pass_k=pass_k,
            html_index=str(outcome.index) if outcome.index else None,
            fail_on=fail_on,
        )
        outcome.markdown = write_text(markdown, text, redactor)
    if junit is not None:
        outcome.junit = write_text(junit, render_junit(runs, fail_on=fail_on), redactor)
    return outcome


def read_results(path: str | Path) -> dict[str, Any]:
    """Read an analyze JSON; ``ResultsError`` naming the file when it is not one."""
    path = Path(path)
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except orjson.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("traces"), list):
        raise ResultsError(f"{path}: not a tracekit analyze JSON (no 'traces' list)")
    return data


def _trace_loader(read: Callable[[str], Trace], results_dir: str | Path | None) -> TraceLoader:
    def load(run: Run) -> tuple[Trace | None, str | None]:
        if not run.source:
            return None, "the results name no trace file"
        candidates = [Path(run.source)]
        if results_dir is not None and not Path(run.source).is_absolute():
            candidates.append(Path(results_dir) / run.source)
        error = "not found"
        for candidate in candidates:
            if not candidate.exists() and read is load_trace:
                continue
            try:
                return read(str(candidate)), None
            except Exception as exc:  # shown on the page: a report never dies for one bad trace
                error = f"{type(exc).__name__}: {exc}"
        return None, f"{run.source}: {error}"

    return load
