"""``tracekit mcp``: record, replay and intercept MCP tool servers (the tool side of a session; docs/mcp.md)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tracekit.errors import TracekitError

if TYPE_CHECKING:
    from tracekit.mcp import ToolPolicy

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit mcp --help` and
# the other commands from loading the relay, aiohttp and the case loader.

_CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=_CONTEXT)
def mcp() -> None:
    """Record, replay and intercept MCP tool servers, into the same traces as the model side.

    Point the agent's MCP configuration at `tracekit mcp record --out DIR -- CMD ARGS...` in place of the
    server's own command (docs/mcp.md has blocks for Claude Code, the Agents SDK and the mcp SDK).
    """


def _policy(case_file: Path | None, faults: tuple[str, ...]) -> tuple[ToolPolicy, str | None]:
    from tracekit.intercepts import InterceptConfig, load_intercept_config
    from tracekit.mcp import ToolFault, ToolPolicy

    config = load_intercept_config(case_file) if case_file is not None else InterceptConfig()
    return ToolPolicy(config, [ToolFault.parse(spec) for spec in faults]), config.case_id


_case_option = click.option(
    "--case", "case_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A case file (or raw intercept JSON/YAML) whose tool_intercept/tool_mock to apply to tools/call.",
)  # fmt: skip
_fault_option = click.option(
    "--fault", "faults", multiple=True, metavar="SPEC",
    help="A transport fault on tools/call, TYPE[:VALUE][@TOOL][#N,M] with TYPE timeout, error, latency or cut "
    "(repeatable), e.g. timeout@maps_weather#1 or latency:250.",
)  # fmt: skip
_redact_option = click.option(
    "--redact", multiple=True, metavar="VALUE",
    help="A secret to keep out of the traces (repeatable; 're:' + a regular expression).",
)  # fmt: skip


@mcp.command(context_settings={**_CONTEXT, "ignore_unknown_options": True})
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the tool-side trace (mcp-<id>.jsonl); may be the model proxy's --out.")  # fmt: skip
@click.option("--upstream", metavar="URL", help="A streamable-HTTP MCP server to relay instead of CMD.")
@click.option("--port", type=int, default=0, show_default=True, help="With --upstream: port to listen on (0: any).")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --upstream: address to listen on.")
@click.option("--session", help="The agent session (x-tracekit-session of the model side) the trace belongs to.")
@_case_option
@_fault_option
@_redact_option
@click.option("--fsync", is_flag=True, help="fsync every record (slower; survives power loss).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record(out_dir: Path, upstream: str | None, port: int, host: str, session: str | None,
           case_file: Path | None, faults: tuple[str, ...], redact: tuple[str, ...], fsync: bool,
           command: tuple[str, ...]) -> None:  # fmt: skip
    """Relay an MCP server and record its side of the session: `-- CMD ARGS...` (stdio) or --upstream URL.

    Every JSON-RPC message passes both ways unchanged; initialize, tools/list, each tools/call (arguments,
    result, isError, timing) and every other method are written to DIR as they pass. The server's stderr
    passes through. With --case or --fault the agent's own MCP client receives the injected result.

    \b
      tracekit mcp record --out traces -- python weather_server.py
      tracekit mcp record --out traces --upstream http://127.0.0.1:8000/mcp --port 0
    """
    from tracekit.mcp import ToolSideRecorder, record_stdio
    from tracekit.proxy.launch import redactor_with

    try:
        policy, case_id = _policy(case_file, faults)
    except TracekitError as exc:
        raise click.UsageError(str(exc)) from exc
    redactor = redactor_with(redact)
    if upstream:
        if command:
            raise click.UsageError("give either --upstream URL or -- CMD ARGS..., not both")
        from tracekit.mcp.http import serve_record

        asyncio.run(serve_record(upstream, host, port, out_dir, policy, redactor, session, case_id, fsync))
        return
    if not command:
        raise click.UsageError("give the MCP server's command after --, e.g. tracekit mcp record --out traces -- "
                               "python server.py (or --upstream URL for an HTTP server)")  # fmt: skip
    def open_recorder() -> ToolSideRecorder:
        return ToolSideRecorder.open(out_dir, transport="stdio", command=list(command), session=session,
                                     case_id=case_id, policy=policy, redactor=redactor, fsync=fsync)  # fmt: skip

    try:
        status = asyncio.run(record_stdio(list(command), open_recorder))
    except KeyboardInterrupt:
        status = 0
    sys.exit(status)


@mcp.command(context_settings=_CONTEXT)
@click.argument("recordings", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--port", type=int, help="Serve streamable HTTP on this port (0: any) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --port: address to listen on.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Also write the replayed session as a tool-side trace here.")  # fmt: skip
@_case_option
@_fault_option
def replay(recordings: tuple[Path, ...], port: int | None, host: str, out_dir: Path | None, case_file: Path | None,
           faults: tuple[str, ...]) -> None:  # fmt: skip
    """Answer an MCP client from recordings (files or folders), without starting the server.

    tools/call is matched by tool name and canonical arguments, identical calls in recorded order; a call
    no recording matches gets a JSON-RPC error naming the nearest recorded call and the first difference.

    \b
      tracekit mcp replay traces                 # stdio: put it where the server's command was
      tracekit mcp replay traces --port 0        # streamable HTTP
    """
    from tracekit.mcp import ReplayIndex, Responder, ToolSideRecorder, replay_stdio

    try:
        index = ReplayIndex.load(recordings)
        policy, case_id = _policy(case_file, faults)
    except TracekitError as exc:
        raise click.UsageError(str(exc)) from exc
    if (case_file is not None or faults) and out_dir is None:
        raise click.UsageError("--case and --fault need --out DIR: the replayed session is written there with each "
                               "injection (not beside the recordings, which a later replay would read)")  # fmt: skip
    recorder = None
    if out_dir is not None:
        recorder = ToolSideRecorder.open(out_dir, transport="replay", case_id=case_id, policy=policy)
    try:
        if port is not None:
            from tracekit.mcp.http import serve_replay

            asyncio.run(serve_replay(index, recorder, host, port))
        else:
            asyncio.run(replay_stdio(Responder(index, recorder)))
    except KeyboardInterrupt:
        pass
    finally:
        if recorder is not None:
            recorder.close()


@mcp.command(context_settings=_CONTEXT)
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
def join(folder: Path) -> None:
    """Join each tool-side trace in FOLDER to the model-side trace of its session: one trace per session.

    Run it after the session, on the --out both `tracekit record` and `tracekit mcp record` wrote to. Each
    tools/call is tied to the model's tool call that caused it (tool name, canonical arguments, time); the
    model-side trace is rewritten with the tool side's exchanges and the tool-side file kept as *.jsonl.joined.

    \b
      tracekit mcp join traces && tracekit analyze traces
    """
    from tracekit.mcp.join import join_folder

    try:
        done = join_folder(folder)
    except TracekitError as exc:
        raise click.UsageError(str(exc)) from exc
    for item in done:
        click.echo(f"joined {item.tool.name} into {item.model.name}: {item.matched} of {item.tool_calls} tool calls "
                   "matched the model's")  # fmt: skip
    if not done:
        click.echo(f"{folder}: no tool-side trace matched a model-side one (each stands alone: analyze them as "
                   "they are)")  # fmt: skip
