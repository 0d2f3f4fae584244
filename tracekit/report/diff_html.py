"""The HTML of ``tracekit diff``: an index with the counts and a table per change, and one page per changed
pair (regression, improvement, flaky, added, removed) with the two call sequences side by side.

Layout of ``DIR``::

    index.html                counts; regressions, improvements, flaky, added, removed; unchanged folded
    pairs/<pair>.html         one changed pair: verdicts, failed checks and a link to the trace file of each
                              side, task verdicts, deltas, findings, aligned calls (changed arguments
                              as ``path: old → new``)

Same rules as the report's pages (``tracekit.report.html``): autoescaped templates, inline CSS, no script,
no request; the same diff gives the same bytes.

Example::

    pages = write_diff_html(Path("diff"), diff, base_name="old.json", new_name="new.json")
    pages.index, pages.page_of(diff.pairs[0])   # diff/index.html, pairs/CASE-01.A.0.html (or None)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tracekit import __version__
from tracekit.diff import CHANGED, Diff, Pair
from tracekit.diff.align import AlignedCall
from tracekit.diff.fields import FieldChange, field_changes
from tracekit.diff.stream import Head
from tracekit.output import write_text
from tracekit.redact import Redactor
from tracekit.report.env import report_environment
from tracekit.report.html import _slug, page_path, pages_into
from tracekit.report.runs import RESULTS
from tracekit.results.model import CheckEntry, ToolCallEntry, TraceResult
from tracekit.storage import is_url

#: Rows of each change's table on the index before "… and N more" (every pair has its page regardless).
INDEX_ROWS = 500
#: Unchanged pairs listed (folded) on the index.
UNCHANGED_ROWS = 200
#: Changed pairs whose pages the single-file diff holds (a pair page is 5–10 kB: a few megabytes in all).
SINGLE_PAIRS = 500
#: Check results that make a side fail (listed on the pair page with their evidence).
FAILING = ("fail", "error")
MARKS = {"same": "=", "added": "+", "removed": "−", "moved": "⇄", "changed": "~"}


@dataclass
class CallRow:
    """One row of the side-by-side table: the op and each side's call (None where a side has none)."""

    op: str
    mark: str
    base: ToolCallEntry | None
    new: ToolCallEntry | None
    arguments: dict[str, Any]
    fields: list[FieldChange] = field(default_factory=list)
    """A changed call's differing fields (``path: old → new``), from both sides' arguments."""


@dataclass
class DiffPages:
    """What ``write_diff_html`` wrote."""

    out_dir: str | Path
    files: list[Path] = field(default_factory=list)
    """Every file, ``index.html`` first."""
    pages: dict[int, str] = field(default_factory=dict)
    """id(pair) -> the pair's page, relative to ``out_dir`` (``DiffPagesWriter``: of the pairs the index
    lists; ``write_diff_html``: of every changed pair)."""

    @property
    def index(self) -> Path:
        return page_path(self.out_dir, "index.html")

    def page_of(self, pair: Pair) -> str | None:
        """The pair's page relative to ``out_dir`` (None for an unchanged pair: it has none)."""
        return self.pages.get(id(pair))


def write_diff_html(out_dir: str | Path, diff: Diff, *, base_name: str, new_name: str,
                    redactor: Redactor | None = None,
                    trace_dirs: tuple[str | Path | None, str | Path | None] = (None, None)) -> DiffPages:  # fmt: skip
    """Write the index and a page per changed pair into ``out_dir`` (a folder or a URL); a local folder gets
    them whole or not at all, as the report's (``tracekit.report.html.pages_into``).

    ``trace_dirs``: the folder each side's ``traces[].trace_file`` is relative to (None: the working
    directory), so that a pair page links each side's trace file."""
    with pages_into(out_dir, lambda name: name in ("index.html", "pairs")) as into:
        writer = DiffPagesWriter(out_dir, into, base_name=base_name, new_name=new_name, redactor=redactor,
                                 trace_dirs=trace_dirs)  # fmt: skip
        for pair in diff.pairs:
            page = writer.add(pair)
            if page is not None:
                writer.outcome.pages[id(pair)] = page
        return writer.finish(diff.counts)


class DiffPagesWriter:
    """``write_diff_html`` a pair at a time (``tracekit diff`` streams its pairs): ``add`` writes a changed
    pair's page at once into ``into`` (``pages_into(out_dir, ...)``; None: no pages, only the lists of the
    index) and keeps only the pairs the index lists; ``finish`` writes the index, ``write_single`` the
    single-file diff from the same lists."""

    def __init__(self, out_dir: str | Path, into: str | Path | None, *, base_name: str, new_name: str,
                 redactor: Redactor | None = None,
                 trace_dirs: tuple[str | Path | None, str | Path | None] = (None, None)) -> None:  # fmt: skip
        self.out_dir, self.into, self.redactor, self.trace_dirs = out_dir, into, redactor, trace_dirs
        self.base_name, self.new_name = base_name, new_name
        self.outcome = DiffPages(out_dir)
        self.env = report_environment()
        self.template = self.env.get_template("diff_pair.html.j2")
        self.sections: dict[str, Head[Pair]] = {change: Head(INDEX_ROWS) for change in CHANGED}
        self.unchanged: Head[Pair] = Head(UNCHANGED_ROWS)
        self.slugs: dict[int, str] = {}
        """id(pair) -> the page name of each pair the index lists."""
        self.pages: list[Path] = []
        self._used: set[str] = set()
        self._pair_context = self._common(Diff(counts={}, pairs=[]), self.outcome.page_of)

    def add(self, pair: Pair) -> str | None:
        """Write the page of a changed pair; its path relative to ``out_dir`` (None: unchanged, no page)."""
        if pair.change not in CHANGED:
            self.unchanged.append(pair)
            return None
        slug = _slug(".".join(part for part in (pair.key.case_id, pair.key.group or "",
                                                "" if pair.key.repeat is None else str(pair.key.repeat))
                              if part))  # fmt: skip
        while slug.lower() in self._used:
            slug += "_"
        self._used.add(slug.lower())
        page = f"pairs/{slug}.html"
        section = self.sections[pair.change]
        section.append(pair)
        if section.items and section.items[-1] is pair:  # listed on the index, which links its page
            self.outcome.pages[id(pair)] = page
            self.slugs[id(pair)] = slug
        if self.into is None:
            return page
        old, now = pair.traces
        html = self.template.render(
            root="../", pair=pair, rows=call_rows(pair),
            failed={"base": failing_checks(old), "new": failing_checks(now)},
            trace_links={"base": trace_href(old, self.trace_dirs[0], self.out_dir),
                         "new": trace_href(now, self.trace_dirs[1], self.out_dir)},
            **self._pair_context,
        )  # fmt: skip
        write_text(page_path(self.into, page), html, self.redactor, sweep=False)
        self.pages.append(page_path(self.out_dir, page))
        return page

    def finish(self, counts: dict[str, int]) -> DiffPages:
        """Write the index (``counts``: pairs per change); what was written, index first."""
        assert self.into is not None, "a DiffPagesWriter without a folder writes no index"
        index = self.env.get_template("diff_index.html.j2").render(
            root="", **self._common(Diff(counts=counts, pairs=[]), self.outcome.page_of)
        )
        write_text(page_path(self.into, "index.html"), index, self.redactor, sweep=False)
        self.outcome.files = [page_path(self.out_dir, "index.html"), *self.pages]
        return self.outcome

    def write_single(self, path: str | Path, counts: dict[str, int]) -> Path:
        """Write the diff as one self-contained HTML file (a local path or a URL), atomically: the index, then
        the page of each changed pair listed on it (regressions first, at most ``SINGLE_PAIRS``), each linked
        from its row. No link to the trace files: the file refers to nothing outside itself."""
        listed = [pair for section in self.sections.values() for pair in section]
        embedded = listed[:SINGLE_PAIRS]
        anchors = {id(pair): f"#pair-{self.slugs[id(pair)]}" for pair in embedded}
        common = self._common(Diff(counts=counts, pairs=[]), lambda pair: anchors.get(id(pair)))
        html = self.env.get_template("diff_single.html.j2").render(
            root="", embedded=[(pair, anchors[id(pair)][1:], call_rows(pair),
                                {"base": failing_checks(pair.traces[0]), "new": failing_checks(pair.traces[1])})
                               for pair in embedded],
            left_out=len(listed) - len(embedded), single_pairs=SINGLE_PAIRS, no_links={"base": None, "new": None},
            single=True,
            **common,
        )  # fmt: skip
        return write_text(path, html, self.redactor)

    def _common(self, diff: Diff, page: Callable[[Pair], str | None]) -> dict[str, Any]:
        """What the index and the pair pages show, whatever they are written into."""
        return {"version": __version__, "results_name": f"{self.base_name} → {self.new_name}",
                "base_name": self.base_name, "new_name": self.new_name, "RESULTS": RESULTS, "page": page,
                "marks": MARKS, "diff": diff, "sections": list(self.sections.items()), "unchanged": self.unchanged,
                "limit": INDEX_ROWS, "unchanged_limit": UNCHANGED_ROWS, "summary": summarize}  # fmt: skip


def write_diff_single(path: str | Path, diff: Diff, *, base_name: str, new_name: str,
                      redactor: Redactor | None = None) -> Path:  # fmt: skip
    """``DiffPagesWriter.write_single`` for a diff in memory (no folder written)."""
    writer = DiffPagesWriter(path, None, base_name=base_name, new_name=new_name, redactor=redactor)
    for pair in diff.pairs:
        writer.add(pair)
    return writer.write_single(path, diff.counts)


def call_rows(pair: Pair) -> list[CallRow]:
    """The alignment with each side's call (arguments, error flag) from the results entries."""
    old, now = pair.traces

    def calls(trace: TraceResult | None) -> list[ToolCallEntry]:
        return [call for call in trace.tool_calls if not call.history] if trace is not None else []

    before, after = calls(old), calls(now)

    def pick(found: list[ToolCallEntry], index: int | None) -> ToolCallEntry | None:
        return found[index] if index is not None and index < len(found) else None

    rows = []
    for row in pair.calls:
        base, new = pick(before, row.base), pick(after, row.new)
        fields = field_changes(base.input, new.input) if row.op == "changed" and base and new else []
        rows.append(CallRow(row.op, MARKS[row.op], base, new, row.arguments, fields))
    return rows


def failing_checks(trace: TraceResult | None) -> list[CheckEntry]:
    """The checks (machine, then judged) that failed or gave an unusable answer on one side."""
    if trace is None or trace.verdict is None:
        return []
    return [check for check in trace.verdict.all_checks if check.result in FAILING]


def trace_href(trace: TraceResult | None, folder: str | Path | None, out_dir: str | Path) -> str | None:
    """A link from a pair page (``out_dir/pairs/``) to a side's trace file: relative when both are local
    folders, else absolute (None: the results name no trace file)."""
    if trace is None or not trace.trace_file:
        return None
    if is_url(trace.trace_file):
        return trace.trace_file
    base = os.fspath(folder) if folder is not None else os.getcwd()
    if is_url(base):
        return base.rstrip("/") + "/" + quote(trace.trace_file.lstrip("/"))
    where = Path(base, trace.trace_file).resolve()
    if is_url(os.fspath(out_dir)):
        return where.as_uri()
    relative = os.path.relpath(where, Path(out_dir, "pairs").resolve())
    return quote(Path(relative).as_posix())


def summarize(calls: list[AlignedCall]) -> str:
    """``+1 −2 ⇄1 ~1``: the alignment's ops in a few characters (empty when the calls are the same)."""
    ops = [row.op for row in calls]
    return " ".join(f"{MARKS[op]}{ops.count(op)}" for op in ("added", "removed", "moved", "changed") if ops.count(op))
