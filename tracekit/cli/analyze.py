"""``tracekit analyze``: offline analysis of trace files into the results JSON."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tracekit.cli.common import InputError
from tracekit.errors import TracekitError


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the results JSON here.")
def analyze(paths: tuple[Path, ...], json_path: Path | None) -> None:
    """Analyze trace files (or folders of them) offline.

    Prints a one-line summary; the full results go to --json. Exit status: 0 when it ran, 2 on bad
    usage or unreadable input.
    """
    from tracekit.analyze.results import build_results
    from tracekit.trace import trace_files

    try:
        files = trace_files(paths)
        results = build_results(files)
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    for trace in results["traces"]:
        for problem in trace["problems"]:
            click.echo(f"warning: {problem}", err=True)
    if json_path is not None:
        from tracekit.output import write_json

        write_json(json_path, results)
    summary = results["summary"]
    click.echo(f"{summary['traces']} traces, {summary['tool_calls']} tool calls, {summary['tool_errors']} tool errors")
    if json_path is None:
        click.echo("Write the full results with --json FILE.", err=True)
    sys.stdout.flush()
