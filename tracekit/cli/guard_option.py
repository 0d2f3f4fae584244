"""``--guard [FILE]`` of ``tracekit record`` and ``tracekit replay``: the live guard (``docs/guard.md``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from tracekit.proxy.observers import ExchangeObserver

GUARD_HELP = (
    "Run the detectors and budgets live on every session: record, warn (a note to the model) or stop "
    "(the next request refused), as FILE says (docs/guard.md); --guard alone records every finding."
)


def guard_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--guard [FILE]`` option (its value: None without it, '' alone, else the file)."""
    return click.option("--guard", "guard_file", is_flag=False, flag_value="", default=None, metavar="[FILE]",
                        help=GUARD_HELP)(function)  # fmt: skip


def guard_observer(guard_file: str | None) -> ExchangeObserver | None:
    """The live guard for ``--guard`` (None without it); a bad guard file exits with status 2."""
    if guard_file is None:
        return None
    from tracekit.guard import GuardConfigError, LiveGuard, load_guard_config  # only when asked for: start-up

    try:
        return LiveGuard(load_guard_config(Path(guard_file) if guard_file else None))
    except GuardConfigError as exc:
        raise click.UsageError(str(exc)) from exc
