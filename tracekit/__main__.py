"""``python -m tracekit``: the same as the ``tracekit`` command."""

from tracekit.cli.main import cli

cli(prog_name="tracekit")
