"""``tracekit schema``: the JSON Schemas of what tracekit writes and reads, for other tools to work with.

``results`` is the analyze JSON, ``trace`` one line of a trace file, ``guard`` the guard file (a YAML
language server can check a guard file against it as it is typed).
"""

from __future__ import annotations

import json
from typing import Any

import click

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.

DRAFT = "https://json-schema.org/draft/2020-12/schema"


@click.group()
def schema() -> None:
    """Print the JSON Schema of a file tracekit writes or reads."""


@schema.command()
def results() -> None:
    """The JSON Schema (draft 2020-12) of the analyze JSON (`tracekit analyze --json`).

    Every field is described; fields a newer tracekit adds are allowed (additionalProperties), so a reader
    built on this schema keeps working as the results grow.
    """
    from tracekit.results.model import results_schema

    click.echo(results_schema())


@schema.command()
def trace() -> None:
    """The JSON Schema (draft 2020-12) of one line of a trace file (`.jsonl`; README, "The canonical trace").

    A line is one record, told apart by its `kind`; the first line of a file is the `header`. Every field
    is described; fields a newer tracekit adds are allowed, as the readers allow them.
    """
    from pydantic import TypeAdapter

    from tracekit.trace.models import FORMAT_VERSION, Record

    document = TypeAdapter(Record).json_schema()
    _echo({**document, "title": f"tracekit trace record (format {FORMAT_VERSION})"})


@schema.command()
def guard() -> None:
    """The JSON Schema (draft 2020-12) of the guard file (`tracekit record --guard FILE`, docs/guard.md).

    The file is YAML; an editor's YAML language server can check it against this schema as it is typed.
    """
    from tracekit.analyze.detectors import REGISTRY
    from tracekit.guard.config import GuardConfig

    document = GuardConfig.model_json_schema()
    document["properties"]["findings"]["propertyNames"] = {"enum": list(REGISTRY)}  # (checked by a validator)
    _echo({**document, "title": "tracekit guard file"})


def _echo(document: dict[str, Any]) -> None:
    click.echo(json.dumps({"$schema": DRAFT, **document}, ensure_ascii=False, indent=2))
