"""``tracekit replay``: answer model API requests from recordings."""

from __future__ import annotations

from pathlib import Path

import click

from tracekit.cli.exits import InputError
from tracekit.cli.guard_option import guard_option
from tracekit.cli.proxy_options import HOST_HELP, body_options, chosen_limits, limit_options, serve_proxy
from tracekit.errors import TracekitError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--port", type=int, required=True, help="Port to listen on (0: pick a free one and print it).")
@click.option("--host", default="127.0.0.1", show_default=True, help=HOST_HELP)
@click.option("--allow-remote", is_flag=True, help="Allow a non-loopback --host (prints a warning).")
@click.option("--case", "case_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Apply this case's intercepts and faults, as when recording.")  # fmt: skip
@click.option("--timing", type=click.Choice(["instant", "recorded"]), default="instant", show_default=True,
              help="'recorded' reproduces the recorded time to first byte and gaps between events.")  # fmt: skip
@click.option("--on-miss", type=click.Choice(["error", "record"]), default="error", show_default=True,
              help="'record' forwards unmatched requests to --upstream and records the session.")  # fmt: skip
@click.option("--upstream", metavar="URL", help="The model API to ask on a miss (with --on-miss record).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Also write traces of the replayed sessions here (with --on-miss record: sessions "
                   "that missed are written to DIRECTORY unless --out is given).")  # fmt: skip
@click.option("--ignore", "ignore", multiple=True, metavar="PATH",
              help="A request field to leave out when matching (repeatable): client_metadata, $.input[*].id, "
                   "metadata.*; also 'ignore:' in DIRECTORY/replay.yaml.")  # fmt: skip
@click.option("--no-builtin-rules", is_flag=True,
              help="Do not leave out the per-run fields of the clients tracekit knows (the Codex CLI's ids, ...).")
@click.option("--redact", "redact", multiple=True, metavar="VALUE", help="A secret to keep out of written traces.")
@body_options
@limit_options
@guard_option
def replay(
    directory: Path,
    port: int,
    host: str,
    allow_remote: bool,
    case_file: Path | None,
    timing: str,
    on_miss: str,
    upstream: str | None,
    out_dir: Path | None,
    ignore: tuple[str, ...],
    no_builtin_rules: bool,
    redact: tuple[str, ...],
    redact_fields: tuple[str, ...],
    max_body_bytes: int,
    guard_file: str | None,
) -> None:
    """Answer POST /v1/messages, /v1/chat/completions, /v1/responses (and its WebSocket mode) and every other
    recorded route from the traces in DIRECTORY (Amazon Bedrock's /model/ID/converse, /invoke and their
    streams, Gemini's /v1beta/models/MODEL:generateContent and :streamGenerateContent, Azure OpenAI's
    /openai/... paths too).

    Requests match recordings by a ladder (docs/replay.md), each answer saying which rung in its
    x-tracekit-replay-match header and the exit line counting them: `exact` (a canonical key of the
    body, not headers; `stream` and metadata.user_id ignored), `volatile` (the per-run ids of known
    clients and the --ignore fields left out), `session` (the next recorded call of the same session,
    same route, model and shape). Repeats are answered first-in, first-out. A stream request gets SSE even from a
    JSON recording and the other way round. A miss is a provider-shaped 404 error with
    x-should-retry: false that names the nearest recorded request and the first difference. No
    connection upstream is made unless --on-miss record --upstream URL.
    --guard [FILE] watches each session live, as in tracekit record (docs/guard.md), e.g.:
      tracekit replay recordings --port 0 --guard guard.yaml
    """
    # The proxy is loaded when the command runs, not for --help (tracekit.cli.proxy_options loads none of it).
    from tracekit.cli.paths import output_folder
    from tracekit.proxy.launch import match_rules
    from tracekit.proxy.listening import check_host

    if on_miss == "record" and not upstream:
        raise click.UsageError("--on-miss record needs --upstream URL")
    output_folder("--out", out_dir)
    if on_miss == "error" and not _holds_a_trace(directory):
        try:
            check_host(host, allow_remote, lambda _warning: None)  # a refused address is the first thing to say
        except TracekitError as exc:
            raise click.UsageError(str(exc)) from exc
        raise InputError(
            f"no trace files found in {directory} (a trace file ends in .jsonl); record some with tracekit record"
        )
    try:
        rules = match_rules(directory, ignore, builtin=not no_builtin_rules)
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    serve_proxy(
        host, port, allow_remote, case_file=case_file, redact=redact, guard_file=guard_file, mode="replay",
        upstream=upstream if on_miss == "record" else None, out_dir=out_dir, replay_dir=directory, timing=timing,
        on_miss=on_miss, max_body_bytes=max_body_bytes, secret_fields=redact_fields, match_rules=rules,
        **chosen_limits(),
    )


def _holds_a_trace(directory: Path) -> bool:
    """Whether ``directory`` holds a trace file, at any depth (the first found ends the search: replay's loader
    lists them all in the background)."""
    return any(path.is_file() for path in directory.rglob("*.jsonl"))
