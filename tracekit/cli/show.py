"""``tracekit show``: a readable timeline of one trace in the terminal."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from tracekit.cli.exits import EXIT_USAGE, InputError
from tracekit.errors import TracekitError

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.

@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--width", default=160, show_default=True, help="Shorten results and texts to this many characters.")
@click.option("--full", is_flag=True, help="Do not shorten anything.")
def show(paths: tuple[Path, ...], width: int, full: bool) -> None:
    """Print the timeline of each trace in PATHS (trace files, or folders of them): turns, tool calls with
    arguments, results (shortened), errors marked, tokens and latency per model call.

    Exit status 2 when a path holds no trace file or a file is not a readable trace (the others are
    still shown; the reason goes to standard error, one line per file).
    """
    from tracekit.cli.paths import trace_files_in
    from tracekit.trace import load_trace

    files = trace_files_in(paths)
    limit = 0 if full else width
    failed = False
    for number, path in enumerate(files):
        try:
            trace = load_trace(path)
        except (TracekitError, OSError) as exc:
            if len(files) == 1:
                raise InputError(_one_line(exc, path)) from exc
            click.echo(f"Error: {_one_line(exc, path)}", err=True)
            failed = True
            continue
        if number:
            click.echo("")
        for line in render_timeline(trace, limit):
            click.echo(visible(line))
        for problem in trace.problems:
            click.echo(visible(f"warning: {problem}"), err=True)
    if failed:
        raise SystemExit(EXIT_USAGE)


# C0 and C1 control characters (ESC starts the terminal's colour, cursor and OSC title/hyperlink sequences)
# and the bidirectional overrides and isolates that can make text read in another order than it is stored
# (CVE-2021-42574, "Trojan Source"). Printable Unicode, Chinese included, is printed exactly.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(line: str) -> str:
    """``line`` with control characters shown as escapes (ESC as ``\\x1b``), so that a trace's content is
    shown as text and never drives the terminal."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100
                        else f"\\u{ord(match.group()):04x}", line)


def _one_line(exc: Exception, path: Path) -> str:
    """The error as one line that names the file (an OSError names only its reason)."""
    text = str(exc) if isinstance(exc, TracekitError) else f"{path}: {getattr(exc, 'strerror', None) or exc}"
    return " ".join(text.split())


def render_timeline(trace: Any, limit: int) -> list[str]:
    """The lines of the timeline (no colours, so that they can be tested and piped); records are told apart by
    their ``kind``."""
    from tracekit.trace import content_text
    from tracekit.trace.canonical import canonical_json

    header = trace.header
    bound = f"  case {header.case_id}" + (f" group {header.group}" if header.group else "") if header.case_id else ""
    lines = [f"trace {header.trace_id}  ({header.source or 'unknown source'}){bound}"]
    if header.meta:
        lines.append("  meta " + _short(canonical_json(header.meta).decode(), limit))
    for record in trace.records:
        kind = record.kind
        if kind == "system_message":
            lines.append("  system  " + _short(content_text(record.content), limit))
        elif kind == "user_message":
            lines.append(f"[{record.message_index}] user      " + _short(content_text(record.content), limit))
        elif kind == "assistant_message":
            lines.extend(_assistant_lines(record.message_index, record.content, limit))
        elif kind == "tool_call":
            arguments = canonical_json(record.input).decode() if not record.input_parse_error else record.input
            lines.append(f"    → #{record.index} {record.name}({_short(str(arguments), limit)})")
        elif kind == "tool_result":
            mark = "✗ error " if record.is_error else ""
            injected = "⚡ injected " if record.injected else ""
            target = f"#{record.call_index}" if record.call_index is not None else "#?"
            lines.append(f"    ← {target} {injected}{mark}" + _short(content_text(record.content), limit))
        elif kind == "model_call" and getattr(record, "side_call", None):
            from tracekit.report.timeline import side_call_answer  # (loads the providers: only for a side call)

            answer = side_call_answer(record)
            lines.append("  side " + _describe_model_call(record) + (" → " + _short(answer, limit) if answer else ""))
        elif kind == "model_call":
            lines.append("  " + _describe_model_call(record))
        elif kind == "intercept":
            lines.append(f"    ⚡ {record.mode} on {record.tool or 'request'}: " + _short(str(record.injected), limit))
        elif kind == "error":
            status = f" {record.status}" if record.status else ""
            lines.append(f"  ✗ {record.source} error{status}: " + _short(record.message, limit))
        elif kind == "guard":
            calls = " " + ",".join(f"#{index}" for index in record.calls) if record.calls else ""
            lines.append(f"  ⛨ guard {record.action} {record.rule}{calls}: " + _short(record.message, limit))
        elif kind == "agent_run":
            lines.append(f"  agent exited {record.exit_status}" + (" (timed out)" if record.timed_out else ""))
    stats = trace.stats()
    lines.append(
        f"{stats.llm_calls} LLM calls, {stats.tool_calls} tool calls ({stats.tool_errors} errors), "
        f"{stats.input_tokens} input / {stats.output_tokens} output tokens"
    )
    return lines


def _describe_model_call(call: Any) -> str:
    parts = [f"model call {call.index}", call.model or call.provider]
    if call.stream:
        parts.append("stream")
    usage = call.usage
    if usage.input_tokens is not None or usage.output_tokens is not None:
        parts.append(f"{usage.input_tokens or 0} in / {usage.output_tokens or 0} out tokens")
    if call.latency_ms is not None:
        parts.append(f"{call.latency_ms:.0f} ms")
    if call.status and call.status >= 400:
        parts.append(f"✗ HTTP {call.status}")
    if call.partial:
        parts.append("✗ partial")
    if call.attempts > 1:
        parts.append(f"{call.attempts} attempts")
    return " · ".join(parts)


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    if limit and len(text) > limit:
        return text[: limit - 1] + "…"
    return text


def _assistant_lines(index: int, content: list[dict[str, Any]], limit: int) -> list[str]:
    """An assistant turn's thinking and text in the order the model gave them (consecutive text blocks joined
    into one line, as ``AssistantMessage.text`` joins them)."""
    from tracekit.trace.models import block_text  # the trace models load when the command runs, not for --help

    lines: list[str] = []
    texts: list[str] = []
    for block in [*content, {"type": "end"}]:
        kind = block.get("type")
        if kind != "text" and texts:
            if "".join(texts):
                lines.append(f"[{index}] assistant " + _short("".join(texts), limit))
            texts = []
        if kind == "text":
            texts.append(block_text(block.get("text")))
        elif kind in ("thinking", "redacted_thinking"):
            lines.append(f"[{index}]   (thinking) " + _short(block_text(block.get("thinking", "…")), limit))
    return lines
