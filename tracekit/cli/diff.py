"""``tracekit diff``: what changed between two analyses of the same cases (regressions first)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tracekit.cli.exits import EXIT_CHECK_FAILED, InputError
from tracekit.errors import OptionsError, TracekitError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tracekit.cases.loader import CaseSet
    from tracekit.diff.pairs import Pair, SideKey
    from tracekit.results.model import TraceResult
    from tracekit.results.stream import StoredResults

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.


@click.command()
@click.argument("base")
@click.argument("new")
@click.option("--cases", "cases_dir", metavar="DIR|URL",
              help="The case library, to analyze BASE or NEW when it is a folder of traces.")
@click.option("--json", "json_out", help="Write every pair as JSON here (fields: tracekit.diff.Diff).")
@click.option("--markdown", help="Write a PR-comment-sized Markdown summary here (regressions, improvements).")
@click.option("--html", "html_dir", metavar="DIR|URL",
              help="Write the HTML diff into this folder (or URL): an index with the counts, a page per changed pair.")
@click.option("--html-single", "html_single", metavar="FILE|URL",
              help="Write the HTML diff as one self-contained file to attach to a pull request: the index and each "
              "changed pair's page (docs/reports.md).")
@click.option("--fail-on", type=click.Choice(["regression"]), help="Exit 1 when any pair regressed.")
def diff(base: str, new: str, cases_dir: str | None, json_out: str | None, markdown: str | None,
         html_dir: str | None, html_single: str | None, fail_on: str | None) -> None:  # fmt: skip
    """Compare BASE and NEW: each a results JSON of `tracekit analyze --json`, or a folder of traces
    (analyzed here, against --cases when given).

    Pairs traces by case, group and repeat (an imported trace bound to no case by its importer's task,
    e.g. tau-bench's task_id, trial by trial); a pair is judged on all the repeats of its case together,
    so mixed outcomes are reported as flaky, not as a regression.

    \b
    Example:
      tracekit diff old/results.json new/results.json --html diff --markdown diff.md --fail-on regression
      tracekit diff recordings/reference recordings/flawed --cases cases --html diff

    Exit status: 0 when it ran, 1 with --fail-on regression and a regression, 2 on unreadable input.
    """
    from tracekit.cli.paths import case_library, output_file, output_folder

    case_library("--cases", cases_dir)
    output_file("--json", json_out)
    output_file("--markdown", markdown)
    output_folder("--html", html_dir)
    output_file("--html-single", html_single)
    library = _library(cases_dir, base, new)
    with contextlib.ExitStack() as stack:
        counts = _write_diff(stack, base, new, library, json_out, markdown, html_dir, html_single)
    if fail_on == "regression" and counts["regression"]:
        click.echo(f"{counts['regression']} pairs regressed (--fail-on regression)", err=True)
        sys.stdout.flush()
        sys.exit(EXIT_CHECK_FAILED)


def _library(cases_dir: str | None, *sides: str) -> CaseSet | None:
    """The case library, loaded once for the sides that are folders of traces (None without --cases, or when
    both sides are results files)."""
    from tracekit.storage import kind

    if cases_dir is None or all(kind(side) != "directory" for side in sides):
        return None
    from tracekit.application import load_case_set

    try:
        return load_case_set(cases_dir)
    except TracekitError as exc:
        raise InputError(str(exc)) from exc


def _write_diff(stack: contextlib.ExitStack, base: str, new: str, library: CaseSet | None, json_out: str | None,
                markdown: str | None, html_dir: str | None, html_single: str | None) -> dict[str, int]:  # fmt: skip
    """Pair the two sides from their keys, then build one pair at a time (its entries read again from each
    results file) and hand it to the JSON, the HTML pages and the Markdown: memory stays flat in the number
    of pairs (``tracekit.diff.stream``)."""
    from tracekit.diff.latency import latency_reader
    from tracekit.diff.markdown import MarkdownDigest
    from tracekit.diff.pairs import count_changes, plan_pairs
    from tracekit.diff.stream import write_diff_json
    from tracekit.output import atomic_output, write_text

    before, base_keys, base_dir = _side(stack, base, library)
    after, new_keys, new_dir = _side(stack, new, library)
    plan = plan_pairs(base_keys, new_keys)
    counts = count_changes(plan)
    click.echo(", ".join(f"{counts[name]} {name}" for name in counts))
    latency = latency_reader(base_dir, new_dir)
    pairs = (planned.build(before.entry, after.entry, latency) for planned in plan)
    writer = digest = None
    if html_dir is not None or html_single is not None:
        from tracekit.report.diff_html import DiffPagesWriter
        from tracekit.report.html import pages_into

        # Without --html the writer writes no page: it keeps what the single file shows.
        into = None if html_dir is None else stack.enter_context(
            pages_into(html_dir, lambda name: name in ("index.html", "pairs")))  # fmt: skip
        writer = DiffPagesWriter(html_dir or html_single or "", into, base_name=_name(base), new_name=_name(new),
                                 trace_dirs=(base_dir, new_dir))  # fmt: skip
    folder = _relative_to(html_dir, markdown) if html_dir is not None and markdown is not None else ""
    if markdown is not None:
        digest = MarkdownDigest()

    def each(pairs: Iterator[Pair]) -> Iterator[Pair]:
        for pair in pairs:
            page = writer.add(pair) if writer is not None else None
            if digest is not None:
                digest.add(pair, _page(folder, page) if html_dir is not None else None)
            yield pair

    if json_out is not None:
        with atomic_output(json_out) as out:
            write_diff_json(out, counts, each(pairs))
    else:
        for _pair in each(pairs):
            pass
    if json_out is not None:
        click.echo(f"JSON: {json_out}")
    pages = writer.finish(counts) if writer is not None and html_dir is not None else None
    if pages is not None:
        click.echo(f"HTML diff: {pages.index} ({len(pages.files)} pages)")
    if writer is not None and html_single is not None:
        click.echo(f"HTML diff in one file: {writer.write_single(html_single, counts)}")
    if markdown is not None and digest is not None:
        index = _page(folder, "index.html") if pages is not None else None
        write_text(markdown, digest.render(counts, index))
        click.echo(f"Markdown: {markdown}")
    return counts


def _side(stack: contextlib.ExitStack, path: str,
          library: CaseSet | None) -> tuple[StoredResults, list[SideKey], str | None]:  # fmt: skip
    """The results of one side (read entry by entry), each entry's key, and the folder its ``trace_file``
    entries are relative to."""
    from tracekit.diff.pairs import SideKey
    from tracekit.results.stream import StoredResults
    from tracekit.storage import is_url, kind, local

    keys: list[SideKey] = []

    def keep(position: int, entry: TraceResult) -> None:
        keys.append(SideKey.of(position, entry))

    try:
        if kind(path) == "directory":
            spool = stack.enter_context(_analyzed(path, library))
            return stack.enter_context(StoredResults.open(spool, on_entry=keep)), keys, None
        results = stack.enter_context(StoredResults.open(path, on_entry=keep))
    except TracekitError as exc:
        raise InputError(f"{exc} (give a results JSON of `tracekit analyze --json` or a folder of traces)") from exc
    where = str(local(path))
    return results, keys, (where.rsplit("/", 1)[0] if is_url(where) else os.path.dirname(os.path.abspath(where)))


@contextlib.contextmanager
def _analyzed(folder: str, library: CaseSet | None) -> Iterator[str]:
    """A folder of traces analyzed, as `tracekit analyze FOLDER --cases DIR` would, into a temporary results
    file (removed at the end)."""
    import tempfile

    from tracekit.analyze.results import write_results
    from tracekit.application import Analysis

    try:
        analysis = Analysis.build([folder], library=library, results_dir=os.getcwd())
    except OptionsError as exc:
        raise InputError(str(exc)) from exc
    handle, spool = tempfile.mkstemp(prefix="tracekit-diff-", suffix=".json")
    try:
        with os.fdopen(handle, "wb") as out:
            write_results(analysis.files, out, analysis.settings)
        yield spool
    finally:
        os.unlink(spool)


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] or path


def _relative_to(html_dir: str, markdown: str) -> str:
    """The HTML folder as the Markdown file should link it: relative to the file's folder when both are local
    (a URL as given; a local folder from a Markdown file in a bucket by its absolute path)."""
    from tracekit.storage import is_url, local

    where = str(local(html_dir))
    if is_url(where):
        return where.rstrip("/")
    if is_url(markdown):
        return Path(where).resolve().as_posix()
    return Path(os.path.relpath(Path(where).resolve(), Path(str(local(markdown))).resolve().parent)).as_posix()


def _page(folder: str, page: str | None) -> str | None:
    return None if page is None else f"{folder}/{page}" if folder not in ("", ".") else page
