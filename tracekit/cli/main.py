"""The ``tracekit`` command group.

Commands live one per module in ``tracekit.cli`` and are imported only when invoked, so that
``tracekit --help`` and every command start fast.
"""

from __future__ import annotations

import importlib
import importlib.util

import click

from tracekit import __version__

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
