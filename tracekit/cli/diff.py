"""``tracekit diff``: what changed between two analyses of the same cases (regressions first)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tracekit.cli.exits import EXIT_CHECK_FAILED, InputError
from tracekit.errors import OptionsError, TracekitError

if TYPE_CHECKING:
    from tracekit.results.model import Results

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
    from tracekit.diff import diff_results
    from tracekit.diff.markdown import render_diff_markdown
    from tracekit.diff.pairs import latency_reader
    from tracekit.output import write_text

    case_library("--cases", cases_dir)
    output_file("--json", json_out)
    output_file("--markdown", markdown)
    output_folder("--html", html_dir)
    output_file("--html-single", html_single)
    (before, base_dir), (after, new_dir) = _side(base, cases_dir), _side(new, cases_dir)
    result = diff_results(before, after, latency=latency_reader(base_dir, new_dir))
    counts = result.counts
    click.echo(", ".join(f"{counts[name]} {name}" for name in counts))
    if json_out is not None:
        write_text(json_out, result.model_dump_json(indent=2))
        click.echo(f"JSON: {json_out}")
    pages = None
    if html_dir is not None:
        from tracekit.report.diff_html import write_diff_html

        pages = write_diff_html(html_dir, result, base_name=_name(base), new_name=_name(new),
                               trace_dirs=(base_dir, new_dir))
        click.echo(f"HTML diff: {pages.index} ({len(pages.files)} pages)")
    if html_single is not None:
        from tracekit.report.diff_html import write_diff_single

        single = write_diff_single(html_single, result, base_name=_name(base), new_name=_name(new))
        click.echo(f"HTML diff in one file: {single}")
    if markdown is not None:
        if pages is not None and html_dir is not None:
            folder = _relative_to(html_dir, markdown)
            text = render_diff_markdown(result, link=lambda pair: _page(folder, pages.page_of(pair)),
                                        index=_page(folder, "index.html"))  # fmt: skip
        else:
            text = render_diff_markdown(result)
        write_text(markdown, text)
        click.echo(f"Markdown: {markdown}")
    if fail_on == "regression" and counts["regression"]:
        click.echo(f"{counts['regression']} pairs regressed (--fail-on regression)", err=True)
        sys.stdout.flush()
        sys.exit(EXIT_CHECK_FAILED)


def _side(path: str, cases_dir: str | None) -> tuple[Results, str | None]:
    """The results of one side and the folder its ``trace_file`` entries are relative to."""
    from tracekit.results.model import read_results_file
    from tracekit.storage import is_url, kind, local

    try:
        if kind(path) == "directory":
            return _analyzed(path, cases_dir), None
        results = read_results_file(path)
    except TracekitError as exc:
        raise InputError(f"{exc} (give a results JSON of `tracekit analyze --json` or a folder of traces)") from exc
    where = str(local(path))
    return results, (where.rsplit("/", 1)[0] if is_url(where) else os.path.dirname(os.path.abspath(where)))


def _analyzed(folder: str, cases_dir: str | None) -> Results:
    """A folder of traces analyzed in memory, as `tracekit analyze FOLDER --cases DIR` would."""
    from tracekit.analyze.results import build_results
    from tracekit.application import Analysis

    try:
        analysis = Analysis.build([folder], cases_dir=cases_dir, results_dir=os.getcwd())
    except OptionsError as exc:
        raise InputError(str(exc)) from exc
    return build_results(analysis.files, analysis.settings)


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
