"""The single-file HTML report: one self-contained page a reviewer can attach to a pull request.

It holds what the folder report's index holds (the headline of what failed, the runs, the baseline and
group comparisons, pass^k, findings and failure modes by kind) with every trace in one traces table,
failures first, and below the table the full page of each failing trace (a fail verdict or a session the
guard stopped), in the table's order, each linked from its row and its headline mention. Passing traces
are rows only: their file is in the trace cell's tooltip (``tracekit show FILE``), and the folder report
(``--html DIR``) has a page for every trace, case and finding kind.

The embedded pages are bounded so the file stays attachable whatever the run's size: the first
``EMBED_PAGES`` failing traces in the table's order are candidates, and each is embedded if its page fits in
what the summary, the table and the pages before it leave of ``FILE_BYTES`` (a page that does not fit is
left out; the next, smaller one may still fit). The file says how many were left out and how to see them.
The table itself is never cut.

The same rules as every page (``tracekit.report.html``): CSS inline, call graphs as inline SVG, a
Content-Security-Policy that allows nothing else, everything from a trace autoescaped; the ids of each
embedded page carry their own prefix (``t3-call-2``), so links inside one page stay inside it. The same
input gives the same bytes, written atomically through the redactor.

Example::

    inputs = ReportInputs(results=results, results_name="results.json", cases={}, load=loader)
    single = write_single_html("review.html", runs, inputs)
    single.embedded, single.left_out     # failing traces whose pages are inside; those that are not
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Template
from markupsafe import Markup

from tracekit.output import write_text
from tracekit.report.env import report_environment
from tracekit.report.html import PageLink, ReportInputs, SiteLinks, usage_reported
from tracekit.report.run_order import failures_first
from tracekit.report.runs import Run
from tracekit.report.svg import render_call_graph
from tracekit.report.timeline import build_trace_view

#: Failing traces whose full pages the file may hold (the first ones in the table's order): a reviewer reads
#: the first ones, and 200 pages of the usual size (10–50 kB) are a few megabytes.
EMBED_PAGES = 200
#: The size the file keeps to, in bytes: the embedded pages get what the summary and the traces table leave
#: of it. GitHub takes attachments of up to 25 MB (docs.github.com, "Attaching files"), zipped (it does not
#: take .html); the rest is headroom. The table is never cut, so a run with more rows than fit (about 13,000
#: failing ones, at 1.5 kB a row) makes a larger file with no page embedded.
FILE_BYTES = 20_000_000
#: Room kept for what changes between the measuring render and the final one (the note's numbers, the
#: links of embedded traces: ``#trace-`` instead of ``#row-``).
_SLACK = 64_000


@dataclass
class SingleReport:
    """What ``write_single_html`` wrote."""

    path: Path
    embedded: list[Run] = field(default_factory=list)
    """Failing traces whose full pages are in the file, in the table's order."""
    left_out: list[Run] = field(default_factory=list)
    """Failing traces whose pages are not, past ``EMBED_PAGES`` or ``FILE_BYTES``."""

    def summary_line(self) -> str:
        """``review.html (149 failing traces' pages inside)``, and how many were left out."""
        line = f"{self.path} ({len(self.embedded):,} failing traces' pages inside"
        if self.left_out:
            line += f"; {len(self.left_out):,} more left out, every page is in the folder report (--html DIR)"
        return line + ")"


class SingleLinks(SiteLinks):
    """Links inside the one document: an embedded trace's section, else the trace's row; there are no case
    or kind pages (their names are shown as text)."""

    def __init__(self, runs: Sequence[Run]) -> None:
        super().__init__(runs)
        self.embedded: set[int] = set()

    def trace(self, run: Run, root: str = "") -> str:
        """The trace's page in this file, or its row in the traces table when its page is not embedded."""
        return f"#trace-{self.slug(run)}" if run.position in self.embedded else f"#{self.row(run)}"

    def row(self, run: Run) -> str:
        """The id of the trace's row in the traces table."""
        return f"row-{self.slug(run)}"

    def describe(self, run: Run) -> str:
        """The trace cell's tooltip: the label and the trace file, to read a trace not embedded."""
        return f"{run.label} · {run.source}" if run.source else run.label

    def case(self, case_id: str, root: str = "") -> None:  # type: ignore[override]
        """No case pages in one file."""
        return None

    def kind(self, prefix: str, kind: str, page: int = 1, root: str = "") -> None:  # type: ignore[override]
        """No per-kind lists in one file."""
        return None


def write_single_html(
    path: str | Path,
    runs: Sequence[Run],
    inputs: ReportInputs,
    *,
    embed_pages: int | None = None,
    file_bytes: int | None = None,
) -> SingleReport:
    """Write the single-file report to ``path`` (a local path or a URL), atomically; ``embed_pages`` and
    ``file_bytes`` bound the embedded pages (default ``EMBED_PAGES`` and ``FILE_BYTES``)."""
    embed_pages = EMBED_PAGES if embed_pages is None else embed_pages
    file_bytes = FILE_BYTES if file_bytes is None else file_bytes
    env = report_environment()
    links = SingleLinks(runs)
    ordered = failures_first(runs)
    context = inputs.index_context(runs, ordered)
    common = {**inputs.common(links, runs), "root": ""}
    template, section = env.get_template("single.html.j2"), env.get_template("_single_trace.html.j2")
    failing = context["headline"].failing

    def page(sections: list[Markup], left_out: int) -> str:
        return template.render(
            page=1, pages=[PageLink(1, "#traces")], rows=ordered, page_first=1, page_last=len(ordered),
            sections=sections, embedded=len(sections), left_out=left_out, embed_pages=embed_pages,
            file_megabytes=file_bytes / 1e6, **common, **context,
        )  # fmt: skip

    room = file_bytes - _SLACK - (len(page([], len(failing)).encode("utf-8")) if failing else 0)
    single = SingleReport(Path(path))
    sections: list[Markup] = []
    for tried, run in enumerate(failing):  # the first failing traces only: each one tried is read and drawn
        html = _section(section, common, links, run, len(sections) + 1, inputs) if tried < embed_pages else None
        size = len(html.encode("utf-8")) if html is not None else 0
        if html is None or size > room:
            single.left_out.append(run)
            continue
        room -= size
        sections.append(html)
        single.embedded.append(run)
        links.embedded.add(run.position)
    single.path = write_text(path, page(sections, len(single.left_out)), inputs.redactor)
    return single


def _section(template: Template, common: dict[str, object], links: SingleLinks, run: Run, number: int,
             inputs: ReportInputs) -> Markup:  # fmt: skip
    """A failing trace's page as a section of the document; its ids start ``t<number>-``."""
    trace, error = inputs.load(run)
    if trace is not None:
        run.usage_reported = usage_reported(trace)
    view = build_trace_view(run, trace, error)
    case = inputs.cases.get(run.case_id or "")
    prefix = f"t{number}-"
    html = template.render(
        **common, run=run, view=view, graph=render_call_graph(view.nodes, view.edges, id_prefix=prefix), p=prefix,
        anchor=f"trace-{links.slug(run)}", row=links.row(run), case_title=case.title if case else "",
    )
    return Markup(html)
