"""``tracekit fake-upstream``: serve a scripted fake model API from a script file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from tracekit.testing import FakeUpstream

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`,
# `tracekit fake-upstream --help` (tracekit.testing loads aiohttp and pydantic) and every other command fast.


@click.command("fake-upstream")
@click.option(
    "--script",
    "script_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML (or .json) file of scripted replies; the format is below and in docs/fake-upstream.md.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--port", required=True, type=click.IntRange(0, 65535), help="Port to bind; 0 picks a free one."
)
def fake_upstream(script_path: Path, host: str, port: int) -> None:
    """Serve POST /v1/messages, /v1/chat/completions and /v1/responses from a script, for tests.

    Also Amazon Bedrock's POST /model/ID/converse, /converse-stream, /invoke and
    /invoke-with-response-stream (docs/bedrock.md).

    Prints the base URL on the first line of standard output once it listens. Stops and exits 0 on
    SIGTERM or SIGINT; prints how many requests it served to standard error. A script that cannot be
    used is refused with its file, line and field (exit 2).

    The script is a list of replies, used once each in the order requests arrive (or a mapping of
    such lists: anthropic, openai, openai_responses, replies). A reply is a string (a text answer) or
    a mapping of: text; thinking; tool_use ({name, input} or a list of them); content (blocks in
    order); stop_reason; model; usage; chunk_size; delay ({first_byte, per_event} seconds); headers;
    error ({status, should_retry, retry_after_ms, ...}: an HTTP error instead); fault (reset, or
    {kind: cut|error, after_events: N}). Example:

    \b
      - text: 我查一下。
        tool_use: {name: get_weather, input: {city: 北京}}
      - 明天北京晴。
      - error: {status: 529, should_retry: true}
      - fault: reset

    Every field, with a longer example: docs/fake-upstream.md in the tracekit repository.
    """
    import asyncio  # here too: asyncio alone is a third of a bare start-up

    from tracekit.testing import FakeUpstream, ScriptError, load_script

    try:
        script = load_script(script_path)
    except ScriptError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        served = asyncio.run(_serve(FakeUpstream(script, host=host, port=port)))
    except OSError as exc:
        raise click.UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    click.echo(f"fake-upstream: served {served} requests, {script.remaining} scripted replies left", err=True)


async def _serve(upstream: FakeUpstream) -> int:
    import asyncio

    from tracekit.loop_thread import stop_on_signals

    stop = asyncio.Event()
    stop_on_signals(stop)
    await upstream.astart()
    try:
        click.echo(upstream.url)
        sys.stdout.flush()
        await stop.wait()
    finally:
        await upstream.aclose()
    return len(upstream.requests)
