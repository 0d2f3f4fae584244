"""The ``tracekit`` command group.

Commands live one per module in ``tracekit.cli`` and are imported only when invoked, so that
``tracekit --help`` and every command start fast.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util

import click

from tracekit import __version__
from tracekit.cli.exits import InputError

#: command name -> (module, attribute, one-line help). Each module defines one click command or group.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "import": ("tracekit.cli.import_cmd", "import_group", "Import other tools' transcripts as traces."),
    "show": ("tracekit.cli.show", "show", "Print a readable timeline of one trace."),
    "analyze": ("tracekit.cli.analyze", "analyze", "Analyze traces offline: stats, findings, verdicts."),
    "record": ("tracekit.cli.record", "record", "Run the recording proxy in front of a model API."),
    "replay": ("tracekit.cli.replay", "replay", "Answer model API requests from recordings."),
    "fake-upstream": ("tracekit.cli.fake_upstream", "fake_upstream", "Serve a scripted fake model API."),
    "cases": ("tracekit.cli.cases", "cases", "List, show, validate the case library."),
    "run": ("tracekit.cli.run", "run", "Run cases with the reference agent or your own agent."),
    "judge": ("tracekit.cli.judge", "judge", "Judge traces with an LLM rubric; agreement studies."),
    "report": ("tracekit.cli.report", "report", "Write HTML, Markdown and JUnit reports from results."),
    "export": ("tracekit.cli.export", "export", "Export traces (OpenTelemetry) and results (Parquet tables)."),
    "schema": ("tracekit.cli.schema", "schema", "JSON Schemas: analyze results, trace lines, guard file."),
    "diff": ("tracekit.cli.diff", "diff", "What changed between two analyses: regressions first."),
    "plugins": ("tracekit.cli.plugins", "plugins", "Extension points and what installed packages add."),
    "mcp": ("tracekit.cli.mcp", "mcp", "Record, replay and intercept MCP tool servers (the tool side)."),
}


class LazyGroup(click.Group):
    """A click group that imports a command's module only when that command runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if self._available(name))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute, _ = entry
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            raise
        command: click.Command = getattr(module, attribute)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, with a "did you mean" for a mistyped name (click suggests only from commands it has
        loaded, and this group loads none before one is chosen)."""
        name = args[0] if args else ""
        if not ctx.resilient_parsing and not name.startswith("-") and self.get_command(ctx, name) is None:
            nearest = difflib.get_close_matches(name.lower(), self.list_commands(ctx), n=3, cutoff=0.5)
            hint = f"did you mean {' or '.join(map(repr, nearest))}?" if nearest else "see 'tracekit --help'"
            raise click.UsageError(f"no command {name!r}; {hint}", ctx)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; a file-system error no command handled is bad input (exit status 2, no traceback)."""
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError):  # the reader went away (| head): nothing to say to it
                raise
            where = f"{exc.filename}: " if exc.filename else ""
            hint = "check the path and that it can be read or written"
            raise InputError(f"{where}{exc.strerror or exc}; {hint}") from exc

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    @staticmethod
    def _available(name: str) -> bool:
        return importlib.util.find_spec(COMMANDS[name][0]) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracekit")
def cli() -> None:
    """Record, replay and analyze the traces of tool-using LLM agents.

    Exit status: 0 when a command ran, 1 when a check it was asked to enforce failed
    (e.g. --fail-on), 2 on bad usage or unreadable input.
    """
