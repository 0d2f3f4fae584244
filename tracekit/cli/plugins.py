"""``tracekit plugins``: the extension points and what installed packages add through them."""

from __future__ import annotations

import click

from tracekit.cli.exits import InputError
from tracekit.errors import TracekitError


@click.command("plugins", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--check", is_flag=True, help="Import every installed extension (exit 2 naming one that fails).")
def plugins(check: bool) -> None:
    """List the extension points (entry-point group, decorator) and the extensions installed packages
    register through them: model clients, detectors, importers, providers (docs/architecture.md).

    Example:
      tracekit plugins --check
    """
    # Imported when the command runs, not for tracekit --help (as every command does).
    from tracekit.entry_points import load
    from tracekit.plugins import EXTENSION_POINTS

    for point in EXTENSION_POINTS:
        installed = point.installed()
        click.echo(f"{point.name} (entry point group {point.group}; decorator "
                   f"{point.decorator.replace(':', '.')}): {point.names}")
        for name, value in installed.items():
            click.echo(f"  {name} = {value}")
        if not installed:
            click.echo("  (none installed)")
        if check:
            try:
                load(point.group)
            except TracekitError as exc:
                raise InputError(str(exc)) from exc
    if check:
        click.echo("every installed extension loads")
