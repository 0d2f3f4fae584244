"""``tracekit record``: the recording proxy between an agent and a model API."""

from __future__ import annotations

from pathlib import Path

import click

from tracekit.cli.guard_option import guard_option
from tracekit.cli.proxy_options import (
    HOST_HELP,
    body_options,
    chosen_limits,
    limit_options,
    serve_proxy,
    timeout_options,
)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--upstream", required=True, metavar="URL", help="The model API, e.g. https://api.anthropic.com.")
@click.option("--port", type=int, required=True, help="Port to listen on (0: pick a free one and print it).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the traces (one <session>.jsonl per agent session).")  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True, help=HOST_HELP)
@click.option("--allow-remote", is_flag=True, help="Allow a non-loopback --host (prints a warning).")
@click.option("--case", "case_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A case file (or raw intercept JSON/YAML) whose intercepts and faults to apply.")  # fmt: skip
@click.option("--redact", "redact", multiple=True, metavar="VALUE",
              help="A secret to keep out of the traces (repeatable; 're:' + a regular expression).")  # fmt: skip
@body_options
@limit_options
@timeout_options
@click.option("--fsync", is_flag=True, help="fsync every record (slower; survives power loss).")
@guard_option
def record(
    upstream: str,
    port: int,
    out_dir: Path,
    host: str,
    allow_remote: bool,
    case_file: Path | None,
    redact: tuple[str, ...],
    redact_fields: tuple[str, ...],
    max_body_bytes: int,
    connect_timeout: float,
    read_timeout: float,
    fsync: bool,
    guard_file: str | None,
) -> None:
    """Forward model API requests to UPSTREAM and record every exchange.

    Serves POST /v1/messages (Anthropic), POST /v1/chat/completions and POST /v1/responses (OpenAI) and
    GET /_tracekit/health.
    Amazon Bedrock: POST /model/ID/converse, /converse-stream, /invoke, /invoke-with-response-stream
    (docs/bedrock.md: SigV4 signs the host, so sign for UPSTREAM and send to the proxy).
    Every other route is forwarded and recorded too (as http_exchange records, which replay answers); one
    that produces model output tracekit does not read is announced on stderr. At exit it prints how many
    sessions and exchanges it wrote.
    Point the agent's SDK at the printed URL (the openai SDK at URL/v1). Requests with the same
    x-tracekit-session header form one trace; without it, sessions are stitched by conversation.
    API keys (headers, ?key= and the like, --redact-field values) are forwarded upstream and never
    written. An upstream URL with user:password@ sends them as basic auth when the agent sends no
    Authorization header. Stops on SIGTERM / SIGINT (exit 0).
    --guard [FILE] watches each session live (loops, budgets; docs/guard.md), e.g.:
      tracekit record --upstream https://api.anthropic.com --port 0 --out traces --guard guard.yaml
    """
    from tracekit.cli.paths import output_folder  # (it loads the storage layer: not for --help)

    output_folder("--out", out_dir)
    serve_proxy(
        host, port, allow_remote, case_file=case_file, redact=redact, guard_file=guard_file, mode="record",
        upstream=upstream, out_dir=out_dir, fsync=fsync, max_body_bytes=max_body_bytes, secret_fields=redact_fields,
        connect_timeout=connect_timeout, read_timeout=read_timeout, **chosen_limits(),
    )
