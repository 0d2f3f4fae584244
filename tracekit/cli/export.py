"""``tracekit export``: traces in other tools' formats."""

from __future__ import annotations

from pathlib import Path

import click

from tracekit.errors import InputError, TracekitError

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.

@click.group()
def export() -> None:
    """Export traces to other formats (OpenTelemetry), and analyze results as Parquet tables."""


@export.command("otel")
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, help="The OTLP JSON file to write (a path or a URL: s3://...).")
@click.option("--with-content", is_flag=True,
              help="Include prompts, answers, tool arguments and results (off by default: they may be sensitive).")
def otel(paths: tuple[str, ...], out: str, with_content: bool) -> None:
    """Write the traces in PATHS (files, folders or URLs such as s3://bucket/prefix) as OTLP JSON spans.

    Spans follow the OpenTelemetry GenAI semantic conventions v1.41.0: invoke_agent per trace, chat per
    model call, execute_tool per tool call. Load the file into any OTLP/JSON backend (Langfuse,
    Phoenix, a collector's otlpjsonfile receiver). Secrets are redacted on the way out.
    """
    from tracekit.export.otel import otlp_document
    from tracekit.output import write_json
    from tracekit.trace import load_trace, trace_files

    try:
        files = trace_files(paths)
        traces = [load_trace(path) for path in files]
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    for trace in traces:
        for problem in trace.problems:
            click.echo(f"warning: {problem}", err=True)
    document = otlp_document(traces, with_content=with_content)
    write_json(out, document, indent=False)
    spans = len(document["resourceSpans"][0]["scopeSpans"][0]["spans"])
    click.echo(f"{len(traces)} traces, {spans} spans -> {out}")


@export.command("parquet")
@click.argument("results")
@click.option("--out", "out", required=True, help="Folder or URL (s3://...) to write the tables into.")
def parquet(results: str, out: str) -> None:
    """Write an analyze results JSON (a path or URL) as Parquet tables: traces, calls, findings, checks.

    Each table is a folder partitioned by run and date (hive style); the columns are in docs/tables.md.
    Times (when a trace started, how long each tool call took) come from the trace files the results name
    (traces[].trace_file, relative to the results file); a trace that cannot be read leaves them null.
    Needs pyarrow: pip install 'tracekit[parquet]'.

    \b
    Example:
      tracekit analyze recordings --cases cases --json results.json
      tracekit export parquet results.json --out tables/
      duckdb -c "FROM read_parquet('tables/traces/**/*.parquet', hive_partitioning=1)"
    """
    from tracekit.results.model import read_results_file
    from tracekit.storage import is_url, local
    from tracekit.tables import write_tables

    target = local(results)
    base = str(target).rsplit("/", 1)[0] if is_url(target) else Path(target).parent
    try:
        document = read_results_file(results)
        tables = write_tables(document, out, base=base)
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    click.echo(f"{len(document.traces)} traces -> {', '.join(tables)} tables in {out}")
