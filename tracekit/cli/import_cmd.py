"""``tracekit import``: other tools' transcripts as trace files (one per transcript) in ``--out DIR``."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import click

from tracekit.cli.exits import EXIT_USAGE, InputError
from tracekit.errors import TracekitError
from tracekit.progress import Progress

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.

_PROGRESS_FROM = 20  # show a progress bar from this many trajectories on
_SHOWN_PROBLEMS = 20  # problems printed one by one; the rest are counted


class _ImportGroup(click.Group):
    """The built-in importers, and one command per importer added from outside (``tracekit.plugins``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from tracekit.importers.registry import importer_names

        return sorted({*super().list_commands(ctx), *importer_names()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from tracekit.importers.registry import importer_named

        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        try:
            function = importer_named(cmd_name)
        except TracekitError as exc:
            raise InputError(str(exc)) from exc
        return None if function is None else _added_importer(cmd_name, function)


@click.group("import", cls=_ImportGroup)
def import_group() -> None:
    """Import other tools' transcripts as traces (one trace file per transcript)."""


def _added_importer(name: str, function: Callable[..., list[Any]]) -> click.Command:
    """``tracekit import NAME FILE... --out DIR`` for an importer added from outside; its help is the
    function's docstring."""

    def command(files: tuple[Path, ...], out: Path | str) -> None:
        _run_reading_on(lambda problems: function(list(files), problems), out)

    help_text = (function.__doc__ or f"FILE is read by the importer {name!r}.").strip()
    return _out(_files(click.command(name, help=help_text)(command)))


class _Destination(click.ParamType):
    """--out: a local folder (a ``Path``) or a URL (``s3://bucket/prefix``, kept as a string)."""

    name = "DIR|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path | str:
        from tracekit.cli.paths import output_folder
        from tracekit.storage import is_url, local

        where = local(value) if isinstance(value, str) else value
        output_folder("--out", where)  # before any file is read
        return str(where) if is_url(where) else Path(where)


_out = click.option(
    "--out", "out", required=True, type=_Destination(),
    help="Folder or URL (s3://bucket/prefix) to write the trace files to (created if missing).",
)
_case = click.option("--case", "case_id", metavar="ID", help="Bind the traces to this case (header case_id).")
_cases = click.option(
    "--cases", "cases_dir", type=click.Path(exists=True, path_type=Path), metavar="DIR",
    help="Case library to check --case against.",
)
_files = click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))


@import_group.command("anthropic-messages")
@_files
@_case
@_cases
@_out
def anthropic_messages(files: tuple[Path, ...], case_id: str | None, cases_dir: Path | None, out: Path | str) -> None:
    """FILE is a JSON list of Anthropic messages (the seeds' "messages 注入" format, with the agent's turns
    after it) or an object with "messages" and an optional "system"."""
    from tracekit.importers import import_anthropic_messages

    _run_reading_on(
        lambda found: import_anthropic_messages(list(files), case_id=case_id, cases_dir=cases_dir, problems=found),
        out, cases_dir,
    )


@import_group.command("openai-messages")
@_files
@_case
@_cases
@_out
def openai_messages(files: tuple[Path, ...], case_id: str | None, cases_dir: Path | None, out: Path | str) -> None:
    """FILE is a JSON list of OpenAI chat messages or an object with "messages"."""
    from tracekit.importers import import_openai_messages

    _run_reading_on(
        lambda found: import_openai_messages(list(files), case_id=case_id, cases_dir=cases_dir, problems=found),
        out, cases_dir,
    )


@import_group.command("openai-responses")
@_files
@_case
@_cases
@_out
def openai_responses(files: tuple[Path, ...], case_id: str | None, cases_dir: Path | None, out: Path | str) -> None:
    """FILE is a JSON list of OpenAI Responses API items (input items, with the agent's output items after
    them, e.g. the Agents SDK's result.to_input_list()) or an object with "input" and optional
    "instructions" and "output"."""
    from tracekit.importers import import_openai_responses

    _run_reading_on(
        lambda found: import_openai_responses(list(files), case_id=case_id, cases_dir=cases_dir, problems=found),
        out, cases_dir,
    )


@import_group.command("tau-bench")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--domain", callback=lambda _ctx, _param, value: _plain_name("--domain", value),
    help="tau-bench domain for the trace ids: letters, digits, '-' and '_' (default: from the file name, e.g. "
    "airline).",
)
@_out
def tau_bench(file: Path, domain: str | None, out: Path | str) -> None:
    """FILE is a tau-bench trajectories file (a JSON list of {task_id, trial, reward, info, traj}); each
    trajectory becomes one trace with task_id, trial and reward in its meta."""
    from tracekit.importers import iter_tau_bench, read_tau_bench

    try:
        entries = read_tau_bench(file)
        traces = iter_tau_bench(file, entries, domain=domain)
        if len(entries) >= _PROGRESS_FROM and sys.stderr.isatty():
            with Progress(len(entries), label="importing") as progress:
                written = _write_traces(progress.wrap(traces), out)
        else:
            written = _write_traces(traces, out)
    except (TracekitError, OSError) as exc:
        raise InputError(str(exc)) from exc
    _report(len(written), out, None)


@import_group.command("otel")
@_files
@_out
def otel(files: tuple[Path, ...], out: Path | str) -> None:
    """FILE is OpenTelemetry GenAI spans as OTLP JSON (a collector's file exporter output, an OTLP/HTTP JSON
    body, JSONL of either) or a folder of such files. Spans are grouped into sessions (gen_ai.conversation.id,
    else the trace id, stitched where one trace continues another's conversation): one trace each. Reads
    the GenAI names of semantic conventions 1.37 and later and of 1.36 and earlier, and tracekit's own
    `export otel --with-content` output back to the same traces."""
    from tracekit.importers.otel import stream_otel

    _run_reading_on(lambda problems: stream_otel(files, problems), out)


@import_group.command("openinference")
@_files
@_out
def openinference(files: tuple[Path, ...], out: Path | str) -> None:
    """FILE is OpenInference spans (Arize Phoenix; openinference.span.kind, llm.input_messages.N...) as OTLP
    JSON or Phoenix's span JSON, or a folder of such files: LLM spans become model calls, TOOL spans tool
    calls, one trace per session (session.id, else the trace id, stitched as the proxy stitches)."""
    from tracekit.importers.openinference import stream_openinference

    _run_reading_on(lambda problems: stream_openinference(files, problems), out)


@import_group.command("inspect")
@_files
@_out
def inspect_logs(files: tuple[Path, ...], out: Path | str) -> None:
    """FILE is an inspect_ai eval log (.eval or .json) or a folder of them: one trace per sample and epoch,
    with the model calls, tool calls and results, usage, and the task, sample id, epoch, target and scores
    in meta. inspect_ai need not be installed."""
    from tracekit.importers import import_inspect

    _run_reading_on(lambda problems: import_inspect(files, problems), out)


@import_group.command("openai-agents")
@_files
@_out
def openai_agents(files: tuple[Path, ...], out: Path | str) -> None:
    """FILE is the OpenAI Agents SDK's exported trace JSON ({"data": [traces and spans]} as the SDK's exporter
    sends it, a list of them, or JSONL) or a folder of such files: one trace per SDK trace. The SDK's export
    of a Responses model call holds no messages: to keep them, record with
    tracekit.integrations.openai_agents.TracekitProcessor instead."""
    from tracekit.importers import import_openai_agents

    _run_reading_on(lambda problems: import_openai_agents(files, problems), out)


def _plain_name(option: str, value: str | None) -> str | None:
    """``value`` when it is a plain name (it becomes part of file names): no path, no separator."""
    if value is not None and not re.fullmatch(r"[\w\-]{1,64}", value):
        raise click.BadParameter(f"{value!r}: use letters, digits, '-' and '_' only (it names the trace files)",
                                 param_hint=option)
    return value


def _run_reading_on(make: Callable[[list[str]], Iterable[Any]], out: Path | str, cases_dir: Path | None = None) -> None:
    """Import what can be read, write it, and say what could not. Exit status: 0 when every input was read;
    2 when any file or part of one could not be read or written (named ``file:position`` on stderr), after
    every trace that could be read is written; what a trace could not map is in its meta.problems and
    printed here, without changing the status. ``make`` may give the traces one at a time (an importer's
    ``stream_*``): each is written and let go before the next is made."""
    problems: list[str] = []
    notes: list[str] = []
    unwritten: list[str] = []  # after what reading found, as when every trace was made before any was written

    def noted(traces: Iterable[Any]) -> Iterator[Any]:
        for trace in traces:
            notes.extend(f"{trace.trace_id}: {note}" for note in trace.header.meta.get("problems", []))
            yield trace

    try:
        written = _write_traces(noted(make(problems)), out, unwritten)
    except (TracekitError, OSError) as exc:
        raise InputError(str(exc)) from exc
    problems += unwritten
    label = "warning" if written else "error"
    for line in [*problems, *notes][:_SHOWN_PROBLEMS]:
        click.echo(f"{label}: {line}", err=True)
    if len(problems) + len(notes) > _SHOWN_PROBLEMS:
        click.echo(f"warning: ... and {len(problems) + len(notes) - _SHOWN_PROBLEMS} more "
                   "(each trace lists its own in meta.problems)", err=True)
    if problems and not written:
        click.echo("error: nothing imported; fix the files named above, or give files or folders that hold "
                   "transcripts, and run the import again", err=True)
        raise click.exceptions.Exit(EXIT_USAGE)
    _report(len(written), out, cases_dir)
    if problems:
        click.echo(f"error: {len(problems)} part{'s' if len(problems) != 1 else ''} of the input could not be "
                   "imported (named above); the rest was written", err=True)
        raise click.exceptions.Exit(EXIT_USAGE)


def _write_traces(traces: Iterable[Any], out: Path | str, problems: list[str] | None = None) -> list[Any]:
    """Write the traces into the folder ``out``; a URL gets them through a local temporary folder, each file
    uploaded whole (the files are redacted as every trace file is)."""
    from tracekit.importers import write_traces

    if isinstance(out, Path):
        return write_traces(traces, out, problems)
    import tempfile

    from tracekit.output import write_bytes
    from tracekit.storage import join

    with tempfile.TemporaryDirectory(prefix="tracekit-import-") as folder:
        written = write_traces(traces, folder, problems)
        return [write_bytes(join(out, path.name), path.read_bytes()) for path in written]


def _report(count: int, out: Path | str, cases_dir: Path | None) -> None:
    click.echo(f"wrote {count} trace{'s' if count != 1 else ''} to {out}")
    command = ["tracekit", "analyze", str(out)] + (["--cases", str(cases_dir)] if cases_dir else [])
    click.echo("next: " + shlex.join(command))
