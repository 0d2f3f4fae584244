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
    """id(pair) -> the pair's page, relative to ``out_dir``."""

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
        return _write_diff_pages(out_dir, into, diff, base_name, new_name, redactor, trace_dirs)


def _write_diff_pages(out_dir: str | Path, into: str | Path, diff: Diff, base_name: str, new_name: str,
                      redactor: Redactor | None,
                      trace_dirs: tuple[str | Path | None, str | Path | None]) -> DiffPages:  # fmt: skip
    env = report_environment()
    outcome = DiffPages(out_dir)
    outcome.pages = {key: f"pairs/{slug}.html" for key, slug in pair_slugs(diff).items()}
    common = _common(diff, base_name, new_name, outcome.page_of)
    index = env.get_template("diff_index.html.j2").render(root="", **common)
    write_text(page_path(into, "index.html"), index, redactor, sweep=False)
    outcome.files.append(page_path(out_dir, "index.html"))
    template = env.get_template("diff_pair.html.j2")
    for pair in diff.pairs:
        page = outcome.pages.get(id(pair))
        if page is None:
            continue
        old, now = pair.traces
        html = template.render(
            root="../", pair=pair, rows=call_rows(pair),
            failed={"base": failing_checks(old), "new": failing_checks(now)},
            trace_links={"base": trace_href(old, trace_dirs[0], out_dir),
                         "new": trace_href(now, trace_dirs[1], out_dir)},
            **common,
        )  # fmt: skip
        write_text(page_path(into, page), html, redactor, sweep=False)
        outcome.files.append(page_path(out_dir, page))
    return outcome


def write_diff_single(path: str | Path, diff: Diff, *, base_name: str, new_name: str,
                      redactor: Redactor | None = None) -> Path:  # fmt: skip
    """Write the diff as one self-contained HTML file (a local path or a URL), atomically: the index, then the
    page of each changed pair listed on it (regressions first, at most ``SINGLE_PAIRS``), each linked from its
    row. No link to the trace files: the file refers to nothing outside itself."""
    slugs = pair_slugs(diff)
    listed = [pair for change in CHANGED for pair in [p for p in diff.pairs if p.change == change][:INDEX_ROWS]]
    embedded = listed[:SINGLE_PAIRS]
    anchors = {id(pair): f"#pair-{slugs[id(pair)]}" for pair in embedded}
    common = _common(diff, base_name, new_name, lambda pair: anchors.get(id(pair)))
    html = report_environment().get_template("diff_single.html.j2").render(
        root="", embedded=[(pair, anchors[id(pair)][1:], call_rows(pair),
                            {"base": failing_checks(pair.traces[0]), "new": failing_checks(pair.traces[1])})
                           for pair in embedded],
        left_out=len(listed) - len(embedded), single_pairs=SINGLE_PAIRS, no_links={"base": None, "new": None},
        single=True,
        **common,
    )  # fmt: skip
    return write_text(path, html, redactor)


def pair_slugs(diff: Diff) -> dict[int, str]:
    """id(pair) -> the name of each changed pair's page (its case, group and repeat, unique in the diff)."""
    slugs: dict[int, str] = {}
    used: set[str] = set()
    for pair in diff.pairs:
        if pair.change in CHANGED:
            slug = _slug(".".join(part for part in (pair.key.case_id, pair.key.group or "",
                                                    "" if pair.key.repeat is None else str(pair.key.repeat))
                             if part))  # fmt: skip
            while slug.lower() in used:
                slug += "_"
            used.add(slug.lower())
            slugs[id(pair)] = slug
    return slugs


def _common(diff: Diff, base_name: str, new_name: str, page: Callable[[Pair], str | None]) -> dict[str, Any]:
    """What the index and the pair pages show, whatever they are written into."""
    return {"version": __version__, "results_name": f"{base_name} → {new_name}", "base_name": base_name,
            "new_name": new_name, "RESULTS": RESULTS, "page": page, "marks": MARKS, "diff": diff,
            "sections": [(change, [p for p in diff.pairs if p.change == change]) for change in CHANGED],
            "unchanged": [pair for pair in diff.pairs if pair.change == "unchanged"], "limit": INDEX_ROWS,
            "unchanged_limit": UNCHANGED_ROWS, "summary": summarize}  # fmt: skip


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
