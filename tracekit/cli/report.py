"""``tracekit report``: HTML, Markdown and JUnit reports from an analyze results JSON."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tracekit.cli.exits import EXIT_CHECK_FAILED, InputError
from tracekit.errors import TracekitError

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.

@click.command()
@click.argument("results")
@click.option("--html", "html_dir", metavar="DIR|URL", help="Write the HTML report into this folder (or URL: s3://...).")
@click.option("--html-single", "html_single", metavar="FILE|URL",
              help="Write the report as one self-contained HTML file to attach to a pull request: the summary, "
              "every trace in one table (failures first) and the failing traces' pages (docs/reports.md).")
@click.option("--markdown", help="Write a PR-comment-sized Markdown summary here (a path or a URL: s3://...).")
@click.option("--junit", help="Write JUnit XML here (one testcase per run; a path or a URL).")
@click.option("--baseline", help="An earlier results JSON to compare against (a path or a URL).")
@click.option("--cases", "cases_dir", type=click.Path(path_type=Path),
              help="The case library, to show each case's expectation on its page.")
@click.option("--fail-on", type=click.Choice(["fail", "acceptable"]),
              help="Exit 1 when a verdict is fail (or acceptable or worse).")
def report(
    results: str,
    html_dir: str | None,
    html_single: str | None,
    markdown: str | None,
    junit: str | None,
    baseline: str | None,
    cases_dir: Path | None,
    fail_on: str | None,
) -> None:
    """Write reports from RESULTS (the JSON of `tracekit analyze --json`).

    Trace files named in the results are read for the trace pages (relative paths from the working
    directory, then from the results file's folder). Exit status: 0 when written, 1 with --fail-on and
    a failing verdict, 2 on bad usage or unreadable input.
    """
    from tracekit.application import load_case_set
    from tracekit.report import write_reports

    if all(option is None for option in (html_dir, html_single, markdown, junit, fail_on)):
        raise click.UsageError("nothing to do: give --html DIR, --html-single FILE, --markdown FILE, --junit FILE "
                               "or --fail-on")
    from tracekit.cli.paths import case_library, output_file, output_folder

    case_library("--cases", cases_dir)
    output_folder("--html", html_dir)
    output_file("--markdown", markdown)
    output_file("--junit", junit)
    output_file("--html-single", html_single)
    try:
        library = load_case_set(cases_dir) if cases_dir is not None else None
        outcome = write_reports(
            results, html_dir=html_dir, markdown=markdown, junit=junit, baseline=baseline,
            cases=library, fail_on=fail_on or "fail", html_single=html_single,
        )
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    if outcome.index is not None:
        click.echo(f"HTML report: {outcome.index} ({len(outcome.html)} pages)")
    if outcome.single is not None:
        click.echo(f"HTML report in one file: {outcome.single.summary_line()}")
    if outcome.markdown is not None:
        click.echo(f"Markdown: {outcome.markdown}")
    if outcome.junit is not None:
        click.echo(f"JUnit XML: {outcome.junit}")
    if fail_on is not None and outcome.failing:
        click.echo(f"{len(outcome.failing)} runs fail under --fail-on {fail_on}", err=True)
        sys.stdout.flush()
        sys.exit(EXIT_CHECK_FAILED)
