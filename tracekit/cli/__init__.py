"""Command-line interface: one click command per module, gathered lazily by ``main.cli``.

``cli`` is loaded on first use (``from tracekit.cli import cli`` works as usual), so that the command's entry
point (``entry``) decides whether to execute itself again before click and the commands are imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracekit.lazy import lazy_exports

if TYPE_CHECKING:
    from tracekit.cli.main import cli

__all__ = ["cli"]

__getattr__, __dir__ = lazy_exports(__name__, {"main": ["cli"]})
