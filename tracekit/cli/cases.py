"""``tracekit cases``: list, show, validate the case library, and print its JSON Schema."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from tracekit.cli.exits import InputError
from tracekit.errors import CaseError

if TYPE_CHECKING:
    from tracekit.cases.loader import CaseLibrary

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`,
# `tracekit cases --help` (the case models load pydantic) and the start-up of every other command fast.

DEFAULT_DIR = "cases"
_DIR = click.argument("directory", required=False, default=DEFAULT_DIR, type=click.Path(path_type=Path))


def _dump(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def _load(directory: Path) -> CaseLibrary:
    from tracekit.cases.loader import load_cases
    from tracekit.cli.paths import case_library

    try:
        case_library("", directory)
        return load_cases(directory)
    except (CaseError, InputError) as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cases() -> None:
    """List, show and validate the case library (default directory: ./cases)."""


@cases.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects with id, title, ...")
@_DIR
def list_cases(as_json: bool, directory: Path) -> None:
    """List the cases of DIRECTORY: id, dimension, category, difficulty, scoring, title."""
    library = _load(directory)
    rows = [
        {
            "id": case.id,
            "dimension": case.dimension,
            "category": case.category,
            "title": case.title,
            "difficulty": case.difficulty,
            "scoring": case.scoring,
            "file": str(library.source(case.id)),
        }
        for case in sorted(library, key=lambda case: case.sort_key)
    ]
    if as_json:
        click.echo(_dump(rows))
        return
    for row in rows:
        click.echo(f"{row['id']:<10} {row['scoring']:<10} {row['difficulty'] or '-'}  {row['title']}")
    click.echo(f"{len(rows)} cases", err=True)


@cases.command("show")
@click.argument("case_id")
@click.option("--dir", "directory", default=DEFAULT_DIR, type=click.Path(path_type=Path), help="Library directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the case as JSON instead of YAML.")
def show(case_id: str, directory: Path, as_json: bool) -> None:
    """Print one case (as validated, defaults filled in)."""
    library = _load(directory)
    case_id = _find_case_id(case_id, list(library.cases), directory)
    data = library.get(case_id).model_dump(mode="json", by_alias=True, exclude_unset=True)
    if as_json:
        click.echo(_dump(data))
    else:
        import yaml

        click.echo(f"# {library.source(case_id)}")
        click.echo(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110).rstrip())


def _find_case_id(wanted: str, ids: list[str], directory: Path) -> str:
    """The id of the library that is ``wanted`` in any letter case; else exit 2 naming the nearest ids."""
    if wanted in ids:
        return wanted
    folded = [case_id for case_id in ids if case_id.casefold() == wanted.casefold()]
    if len(folded) == 1:
        return folded[0]
    from tracekit.cases.loader import nearest_ids

    nearest = nearest_ids(wanted, ids)
    hint = f"did you mean {', '.join(nearest)}?" if nearest else f"`tracekit cases list {directory}` lists them all"
    click.echo(f"no case {wanted!r} in {directory} ({len(ids)} cases); {hint}", err=True)
    sys.exit(2)


@cases.command("validate")
@_DIR
def validate(directory: Path) -> None:
    """Validate every case and the tool catalog; one line per problem (file:line: field: message).

    Exit status 0 when clean, 2 when any problem is found.
    """
    from tracekit.cases.lint import lint_library
    from tracekit.cases.loader import collect_library
    from tracekit.cli.paths import case_library

    try:
        case_library("", directory)
    except InputError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)
    library, problems = collect_library(directory)
    problems += lint_library(library)
    for problem in problems:
        click.echo(str(problem))
    summary = f"{len(library.entries)} cases, {len(library.catalog)} tools, {len(problems)} problems"
    click.echo(summary, err=True)
    if problems:
        sys.exit(2)


@cases.command("schema")
@click.option("--catalog", is_flag=True, help="Print the tool catalog file's schema instead of the case's.")
def schema(catalog: bool) -> None:
    """Print the JSON Schema of a case file (for editors: yaml-language-server)."""
    from tracekit.cases.catalog import ToolFamily
    from tracekit.cases.model import Case

    model = ToolFamily if catalog else Case
    data = model.model_json_schema(by_alias=True)
    data["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    click.echo(_dump(data))
