"""The HTML report: a folder of self-contained pages.

Layout of ``DIR``::

    index.html                summary sections + the first page of traces
    runs-2.html, ...          further pages of traces (PAGE_SIZE rows each)
    cases/<case>.html         one page per case: expectation beside what the agent did, checks, judge
    traces/<trace>.html       one page per trace: timeline, findings on their calls, call graph
    kinds/finding-<k>.html    every trace with a finding kind (paginated likewise)
    kinds/mode-<m>.html       every trace with a failure mode
    kinds/outcome-<o>.html    every trace with an importer's outcome (tau-bench ``reward 1.0``): the filter

Pages carry their CSS inline and draw the call graph as inline SVG; a Content-Security-Policy allows
nothing else, so a page never runs a script or makes a request. The same input gives the same bytes:
nothing depends on the clock, the machine or dict/set iteration of unordered data.

A local folder is written through ``tracekit.output.staged_folder``: every page goes to a hidden staging
folder first and the report moves into place when it is complete, index first; a run killed halfway leaves
the previous report as it was. (A URL gets its pages uploaded one by one, the index last.)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracekit.output import staged_folder, write_text
from tracekit.redact import Redactor
from tracekit.report.case_view import CaseView
from tracekit.report.compare import BaselineDiff, GroupComparison
from tracekit.report.env import report_environment
from tracekit.report.index_view import index_context, trace_columns
from tracekit.report.run_order import failures_first
from tracekit.report.runs import RESULTS, Run
from tracekit.report.summary import KindGroup, PassK
from tracekit.report.svg import render_call_graph
from tracekit.report.timeline import CallView, TraceTotals, build_trace_view
from tracekit.results.model import Results
from tracekit.storage import is_url, join
from tracekit.trace import ModelCall, Trace

#: Rows per page of a trace list: 10,000 traces make 50 light pages instead of one heavy one.
PAGE_SIZE = 200
#: Runs of a case shown in full on its page (failing ones first); all of them are listed below.
CASE_DETAIL_RUNS = 12
#: Rows of a case page's list of all its runs.
CASE_LIST_RUNS = 1000
TraceLoader = Callable[[Run], "tuple[Trace | None, str | None]"]
"""Loads the trace of a run: (trace, None) or (None, why it could not be read)."""


@dataclass
class PageLink:
    """One page of a paginated list."""

    number: int
    href: str
    """Path from the report root."""


@dataclass
class RunSummary:
    """What the case page shows of a trace that was loaded for its own page."""

    calls: list[CallView]
    final_answer: str
    totals: TraceTotals


class SiteLinks:
    """File names of every page, made from ids but safe as file names and unique."""

    def __init__(self, runs: Sequence[Run]) -> None:
        self._traces: dict[int, str] = {}
        used: set[str] = set()
        for run in runs:
            slug = _slug(_trace_name(run))
            if slug.lower() in used:
                slug = f"{slug}-{_short_hash(f'{run.trace_id}#{run.position}')}"
            used.add(slug.lower())
            self._traces[run.position] = slug
        self._cases: dict[str, str] = {}

    def slug(self, run: Run) -> str:
        """The run's name in file names and anchors: safe characters only, unique in the report."""
        return self._traces[run.position]

    def trace(self, run: Run, root: str = "") -> str:
        """Link to a run's trace page."""
        return f"{root}traces/{self.slug(run)}.html"

    def row(self, run: Run) -> str | None:
        """The id of a run's row in the traces table (None: rows have none; the trace page is the anchor)."""
        return None

    def describe(self, run: Run) -> str:
        """The tooltip of a run's cell in the traces table."""
        return run.label

    def case(self, case_id: str, root: str = "") -> str:
        """Link to a case page."""
        slug = self._cases.get(case_id)
        if slug is None:
            slug = self._cases[case_id] = _slug(case_id)
        return f"{root}cases/{slug}.html"

    def kind(self, prefix: str, kind: str, page: int = 1, root: str = "") -> str:
        """Link to the list of traces with a finding kind (``finding``) or failure mode (``mode``)."""
        suffix = "" if page == 1 else f"-{page}"
        return f"{root}kinds/{prefix}-{_slug(kind)}{suffix}.html"


@dataclass(frozen=True)
class ReportInputs:
    """What the pages of one report are drawn from, the folder report and the single file alike."""

    results: Results
    results_name: str
    cases: Mapping[str, CaseView]
    """The case views the case pages show, by case id."""
    load: TraceLoader
    """Reads a run's trace for its page."""
    comparison: GroupComparison | None = None
    baseline: BaselineDiff | None = None
    baseline_name: str = ""
    pass_k: list[PassK] = field(default_factory=list)
    redactor: Redactor | None = None

    def common(self, links: SiteLinks, runs: Sequence[Run]) -> dict[str, Any]:
        """What every page of the report is rendered with, whatever it shows."""
        return {"links": links, "version": self.results.tracekit, "results_name": self.results_name,
                "RESULTS": RESULTS, "trace_columns": trace_columns(runs)}  # fmt: skip

    def index_context(self, runs: Sequence[Run], ordered: Sequence[Run]) -> dict[str, Any]:
        """What the index shows (``index_view.index_context``) for these runs, in this order."""
        return index_context(runs, ordered, self.results, self.comparison, self.baseline, self.baseline_name,
                             self.pass_k)  # fmt: skip


def write_html_report(
    out_dir: str | Path, runs: Sequence[Run], inputs: ReportInputs, *, page_size: int = PAGE_SIZE
) -> list[Path]:
    """Write every page of the report into ``out_dir`` (a folder or a URL: ``s3://bucket/report``, each page
    uploaded whole); returns the files written (index first). A local folder gets the report whole or not
    at all (``tracekit.output.staged_folder``)."""
    with pages_into(out_dir, owned_by_report) as into:
        return _write_pages(out_dir, into, runs, inputs, page_size)


def owned_by_report(name: str) -> bool:
    """Whether an entry of a report folder is the HTML report's own (replaced or removed when a new report is
    written there): the index, its further pages and the three page folders."""
    return name in ("index.html", "cases", "traces", "kinds") or re.fullmatch(r"runs-\d+\.html", name) is not None


@contextlib.contextmanager
def pages_into(out_dir: str | Path, owns: Callable[[str], bool]) -> Iterator[str | Path]:
    """Where a set of pages for ``out_dir`` is written: a staging folder moved into place when the block ends
    (``tracekit.output.staged_folder``; ``owns`` names the entries of ``out_dir`` that are the pages'), or the
    URL itself (each page uploaded whole: object stores have no folders to swap)."""
    if is_url(os.fspath(out_dir)):
        yield out_dir
        return
    with staged_folder(out_dir, owns) as staging:
        yield staging


def _write_pages(
    out_dir: str | Path, into: str | Path, runs: Sequence[Run], inputs: ReportInputs, page_size: int
) -> list[Path]:
    env = report_environment()
    links = SiteLinks(runs)
    common = inputs.common(links, runs)
    written: list[Path] = []

    templates = {name: env.get_template(name) for name in ("trace.html.j2", "case.html.j2", "index.html.j2",
                                                             "list.html.j2")}

    def render(relative: str, template: str, **context: Any) -> None:
        root = "../" * relative.count("/")
        html = templates[template].render(root=root, **common, **context)
        write_text(page_path(into, relative), html, inputs.redactor, sweep=False)
        written.append(page_path(out_dir, relative))

    by_case: dict[str, list[Run]] = {}
    for run in runs:
        if run.case_id is not None:
            by_case.setdefault(run.case_id, []).append(run)
    detailed = {case_id: _detailed(case_runs) for case_id, case_runs in by_case.items()}
    # What a case page shows of a run in full, kept only for those runs (memory flat in the number of traces).
    shown = {run.position for case_runs in detailed.values() for run in case_runs}
    summaries: dict[int, RunSummary] = {}
    for run in runs:
        trace, error = inputs.load(run)
        if trace is not None:
            run.usage_reported = usage_reported(trace)
        view = build_trace_view(run, trace, error)
        case = inputs.cases.get(run.case_id or "")
        render(
            links.trace(run),
            "trace.html.j2",
            run=run,
            view=view,
            graph=render_call_graph(view.nodes, view.edges),
            case_title=case.title if case else "",
        )
        if run.position in shown:
            summaries[run.position] = RunSummary(view.calls, view.final_answer, view.totals)

    for case_id in sorted(by_case):
        case_runs = by_case[case_id]
        render(
            links.case(case_id),
            "case.html.j2",
            case_id=case_id,
            case=inputs.cases.get(case_id),
            runs=case_runs,
            detailed=detailed[case_id],
            listed=case_runs[:CASE_LIST_RUNS],
            summaries=summaries,
            dimension=case_runs[0].dimension,
            category=case_runs[0].category,
        )

    ordered = failures_first(runs)
    context = inputs.index_context(runs, ordered)
    for prefix, section, groups in (("finding", "findings", context["findings"]),
                                    ("mode", "failure-modes", context["failure_modes"]),
                                    ("outcome", "outcomes", context["outcomes"])):  # fmt: skip
        for group in groups:
            _write_list(render, links, prefix, section, group, page_size)

    pages = _pages(len(runs), page_size, lambda n: "index.html" if n == 1 else f"runs-{n}.html")
    for page in pages:
        render(page.href, "index.html.j2", page=page.number, pages=pages, **_page_rows(ordered, page, page_size),
               **context)
    index = page_path(out_dir, "index.html")
    return sorted(written, key=lambda path: (path != index, str(path)))


def _write_list(
    render: Callable[..., None], links: SiteLinks, prefix: str, section: str, group: KindGroup, page_size: int
) -> None:
    pages = _pages(len(group.runs), page_size, lambda n: links.kind(prefix, group.kind, n))
    title, section_name = {"finding": ("Finding", "findings"), "mode": ("Failure mode", "failure modes"),
                           "outcome": ("Outcome", "outcomes")}[prefix]  # fmt: skip
    heading = f"{title}: {group.kind}"
    for page in pages:
        render(
            page.href,
            "list.html.j2",
            heading=heading,
            section=section_name,
            anchor=section,
            page=page.number,
            pages=pages,
            runs_total=len(group.runs),
            finding_kind=group.kind if prefix == "finding" else None,
            **_page_rows(failures_first(group.runs), page, page_size),
        )


def usage_reported(trace: Trace) -> bool:
    """Whether any model call of the trace carried token usage (a stream without a usage event carries none)."""
    return any(call.usage.input_tokens is not None or call.usage.output_tokens is not None
               for call in trace.of_kind(ModelCall))  # fmt: skip


def page_path(out_dir: str | Path, relative: str) -> Path:
    """Where a page of a report folder goes: a path under a local folder, or the URL under a URL's prefix
    (``Path`` would merge a URL's ``//``; the URL stays a string, typed as the path ``write_text`` returns)."""
    where = os.fspath(out_dir)
    return join(where, relative) if is_url(where) else Path(where) / relative  # type: ignore[return-value]


def _detailed(runs: list[Run]) -> list[Run]:
    """The runs a case page shows in full: failing first, then acceptable, pending, passing; in report order."""
    priority = {"fail": 0, "acceptable": 1, "pending": 2, "pass": 3}
    chosen = sorted(runs, key=lambda run: (priority.get(run.result or "", 4), run.position))[:CASE_DETAIL_RUNS]
    keep = {id(run) for run in chosen}
    return [run for run in runs if id(run) in keep]


def _pages(count: int, size: int, href: Callable[[int], str]) -> list[PageLink]:
    total = max(1, -(-count // size))
    return [PageLink(number, href(number)) for number in range(1, total + 1)]


def _page_rows(runs: Sequence[Run], page: PageLink, size: int) -> dict[str, Any]:
    """The runs on one page of a paged table, and their 1-based range (``page_first``–``page_last``)."""
    first = (page.number - 1) * size
    return {"rows": runs[first : first + size], "page_first": first + 1, "page_last": min(first + size, len(runs))}


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _slug(text: str) -> str:
    """A file name for an id: safe characters kept, the rest replaced; a hash keeps it unique."""
    slug = _UNSAFE.sub("_", text).strip("._-")[:80] or "x"
    if slug != text:
        slug = f"{slug}-{_short_hash(text)}"
    return slug


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _trace_name(run: Run) -> str:
    if run.case_id is None:
        return run.trace_id
    parts = [run.case_id, run.group or "", "" if run.repeat is None else str(run.repeat)]
    if run.show_run:
        parts.append(run.run_short)
    return ".".join(part for part in parts if part)
