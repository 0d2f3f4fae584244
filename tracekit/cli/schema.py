"""``tracekit schema``: the JSON Schemas of what tracekit writes, for other tools to read it by."""

from __future__ import annotations

import click

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.


@click.group()
def schema() -> None:
    """Print the JSON Schema of a file tracekit writes."""


@schema.command()
def results() -> None:
    """The JSON Schema (draft 2020-12) of the analyze JSON (`tracekit analyze --json`).

    Every field is described; fields a newer tracekit adds are allowed (additionalProperties), so a reader
    built on this schema keeps working as the results grow.
    """
    from tracekit.analyze.results_model import results_schema

    click.echo(results_schema())
