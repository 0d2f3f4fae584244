"""Command-line interface: one click command per module, gathered lazily by ``main.cli``."""

from tracekit.cli.main import cli

__all__ = ["cli"]
