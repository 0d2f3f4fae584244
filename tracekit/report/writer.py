"""``write_reports``: the one call that writes the HTML, Markdown and JUnit reports of analyze results.

Used by ``tracekit report`` (from a results file) and by ``tracekit analyze --html/--markdown/--junit``
(handed the results in memory)::

    outcome = write_reports("reports/demo/results.json", html_dir="reports/html", markdown="reports/summary.md",
                            junit="reports/junit.xml", baseline="old/results.json", cases=load_case_set("cases"),
                            html_single="reports/review.html")
    sys.exit(outcome.exit_status)   # 1 when a verdict fails under fail_on

The results are read by the typed model (``tracekit.results.model``); every figure the reports
show comes from its ``summary``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracekit.analyze.summary import build_summary
from tracekit.errors import ResultsError
from tracekit.output import write_text
from tracekit.redact import Redactor
from tracekit.report.case_view import CaseSource, load_case_views
from tracekit.report.compare import compare_groups, diff_baseline
from tracekit.report.html import PAGE_SIZE, ReportInputs, TraceLoader, write_html_report
from tracekit.report.junit import failing_results, render_junit
from tracekit.report.markdown import render_markdown
from tracekit.report.run_order import label_runs, runs_from_results, sort_runs
from tracekit.report.runs import Run, RunKey
from tracekit.report.single import SingleReport, write_single_html
from tracekit.report.summary import pass_hat_k
from tracekit.results.model import Results, read_results_file
from tracekit.results.stream import StoredResults
from tracekit.trace import Trace, load_trace

FAIL_ON = ("fail", "acceptable")
ResultsSource = Results | Mapping[str, Any] | str | Path
"""Analyze results: the model, its JSON as a dict, or the path of a results file."""


@dataclass
class ReportOutcome:
    """What ``write_reports`` wrote and whether the run fails under ``fail_on``."""

    html: list[Path] = field(default_factory=list)
    """Every HTML file, ``index.html`` first (empty without ``html_dir``)."""
    markdown: Path | None = None
    junit: Path | None = None
    single: SingleReport | None = None
    """The single-file HTML report, when asked for (``html_single``)."""
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
    results: ResultsSource,
    html_dir: str | Path | None = None,
    markdown: str | Path | None = None,
    junit: str | Path | None = None,
    baseline: ResultsSource | None = None,
    *,
    cases: CaseSource = None,
    traces_loader: Callable[[str], Trace] | None = None,
    fail_on: str = "fail",
    page_size: int = PAGE_SIZE,
    redactor: Redactor | None = None,
    results_dir: str | Path | None = None,
    results_name: str | None = None,
    html_single: str | Path | None = None,
) -> ReportOutcome:
    """Write the reports asked for and say which verdicts fail.

    - ``results``: the analyze results (``Results``, its JSON as a dict, or the path of the file).
    - ``html_dir`` / ``markdown`` / ``junit``: where to write each report (None: not written).
    - ``html_single``: where to write the single-file HTML report (``tracekit.report.single``).
    - ``baseline``: earlier analyze results (same forms); regressions and improvements lead the index
      and the Markdown.
    - ``cases``: the case library (``CaseSet``, ``CaseLibrary`` or mapping id -> Case) whose expectations the
      case pages show.
    - ``traces_loader``: reads a trace file for its page (default ``load_trace``). The file is
      ``traces[].trace_file`` relative to ``results_dir`` (default: the results file's folder when
      ``results`` is a path, else the working directory); results written before ``trace_file`` existed
      name it by ``source``, tried from ``results_dir`` and each folder above it, then from the working
      directory. A trace that cannot be read gets a page built from the results alone, saying why.
    - ``fail_on``: ``fail`` or ``acceptable``; decides ``ReportOutcome.failing`` and JUnit failures.
    - ``results_name``: what the pages say they were written from (default: the results file's name).

    A results file is read entry by entry (``tracekit.results.stream``): memory stays flat in the number of
    traces. Every file goes through the redactor (``tracekit.output``). Same input, same bytes.
    """
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {FAIL_ON}, not {fail_on!r}")
    baseline_name = ""
    if isinstance(baseline, (str, Path)):
        baseline_name = Path(baseline).name
    elif baseline is not None:
        baseline_name = "baseline"
    before = read_results(baseline) if baseline is not None else None
    with contextlib.ExitStack() as stack:
        if isinstance(results, (str, Path)):
            results_name = results_name or Path(results).name
            if results_dir is None:
                results_dir = Path(results).parent
            document, runs = stack.enter_context(_stored_runs(results))
        else:
            document = read_results(results)
            runs = runs_from_results(document)
        runs = sort_runs(runs)
        comparison = compare_groups(document.summary, runs)
        baseline_diff = diff_baseline(runs, runs_from_results(before)) if before is not None else None
        pass_k = pass_hat_k(document.summary)
        outcome = ReportOutcome(failing=[run for run in runs if run.result in failing_results(fail_on)])

        if html_dir is not None or html_single is not None:
            inputs = ReportInputs(
                results=document, results_name=results_name or "results", cases=load_case_views(cases),
                load=_trace_loader(traces_loader or load_trace, results_dir), comparison=comparison,
                baseline=baseline_diff, baseline_name=baseline_name, pass_k=pass_k, redactor=redactor,
            )  # fmt: skip
            if html_dir is not None:
                outcome.html = write_html_report(html_dir, runs, inputs, page_size=page_size)
            if html_single is not None:  # after the folder: its pages told each run whether its trace reported usage
                outcome.single = write_single_html(html_single, runs, inputs)
        if markdown is not None:
            text = render_markdown(
                runs,
                document.summary,
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


@contextlib.contextmanager
def _stored_runs(path: str | Path) -> Iterator[tuple[Results, list[Run]]]:
    """A results file read entry by entry (``tracekit.results.stream``): the document without its entries,
    and a run per entry that keeps only its key (the pages fetch an entry again when they need it), so
    memory stays flat in the number of traces. A document without a ``summary`` gets the one analyze
    computes from its traces."""
    keys: list[RunKey] = []
    with StoredResults.open(path, on_entry=lambda _position, entry: keys.append(RunKey.of(entry))) as stored:
        document = stored.header
        if document.summary is None:
            summary = build_summary(entry for _position, entry in stored.entries())
            document = document.model_copy(update={"summary": summary})
        yield document, label_runs([Run.stored(position, key, stored.entry) for position, key in enumerate(keys)])


def read_results(results: ResultsSource) -> Results:
    """Analyze results as the model, from the model itself, its JSON as a dict, or a file (``ResultsError``
    naming the file and the field when it is not a results JSON). A document without a ``summary`` gets
    the one analyze computes from its traces."""
    if isinstance(results, Results):
        document = results
    elif isinstance(results, (str, Path)):
        document = read_results_file(results)
    else:
        from pydantic import ValidationError

        try:
            document = Results.model_validate(results)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"])
            raise ResultsError(f"results: {where}: {error['msg']} (not a tracekit analyze JSON?)") from None
    if document.summary is None:  # a document made by hand: the summary analyze would have written
        document = document.model_copy(update={"summary": build_summary(document.traces)})
    return document


def _trace_loader(read: Callable[[str], Trace], results_dir: str | Path | None) -> TraceLoader:
    def load(run: Run) -> tuple[Trace | None, str | None]:
        candidates = []
        if run.entry.trace_file:
            candidates.append(Path(results_dir or ".") / run.entry.trace_file)
        if run.source:  # results written before trace_file: source is relative to a folder above the results
            source = Path(run.source)
            if results_dir is not None and not source.is_absolute():
                folder = Path(os.path.abspath(results_dir))
                candidates += [ancestor / source for ancestor in (folder, *folder.parents)]
            candidates.append(source)
        if not candidates:
            return None, "the results name no trace file"
        error = "not found"
        for candidate in candidates:
            if not candidate.exists() and read is load_trace:
                continue
            try:
                return read(str(candidate)), None
            except Exception as exc:  # shown on the page: a report never dies for one bad trace
                error = f"{type(exc).__name__}: {exc}"
        return None, f"{run.source or run.entry.trace_file}: {error}"

    return load
