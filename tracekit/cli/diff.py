"""``tracekit diff``: what changed between two analyses of the same cases (regressions first)."""

from __future__ import annotations

import sys

import click

from tracekit.cli.common import EXIT_CHECK_FAILED, InputError
from tracekit.errors import TracekitError


@click.command()
@click.argument("base")
@click.argument("new")
@click.option("--json", "json_out", help="Write every pair as JSON here (fields: tracekit.diff.Diff).")
@click.option("--markdown", help="Write a PR-comment-sized Markdown summary here (regressions, improvements).")
@click.option("--fail-on", type=click.Choice(["regression"]), help="Exit 1 when any pair regressed.")
def diff(base: str, new: str, json_out: str | None, markdown: str | None, fail_on: str | None) -> None:
    """Compare BASE and NEW, two results JSON files of `tracekit analyze --json`.

    Pairs traces by case (trace id without a case), group and repeat; a pair is judged on all the
    repeats of its case together, so mixed outcomes are reported as flaky, not as a regression.

    Example: tracekit diff old/results.json new/results.json --markdown diff.md --fail-on regression

    Exit status: 0 when it ran, 1 with --fail-on regression and a regression, 2 on unreadable input.
    """
    from tracekit.analyze.results_model import read_results_file
    from tracekit.diff import diff_results
    from tracekit.diff.markdown import render_diff_markdown
    from tracekit.output import write_text

    try:
        result = diff_results(read_results_file(base), read_results_file(new))
    except TracekitError as exc:
        raise InputError(f"{exc} (give two results JSON files of `tracekit analyze --json`)") from exc
    counts = result.counts
    click.echo(", ".join(f"{counts[name]} {name}" for name in counts))
    if json_out is not None:
        write_text(json_out, result.model_dump_json(indent=2))
        click.echo(f"JSON: {json_out}")
    if markdown is not None:
        write_text(markdown, render_diff_markdown(result))
        click.echo(f"Markdown: {markdown}")
    if fail_on == "regression" and counts["regression"]:
        click.echo(f"{counts['regression']} pairs regressed (--fail-on regression)", err=True)
        sys.stdout.flush()
        sys.exit(EXIT_CHECK_FAILED)
