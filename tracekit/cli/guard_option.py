"""``--guard [FILE]`` and ``--guard-budget`` of ``tracekit record`` and ``tracekit replay``: the live guard
(``docs/guard.md``)."""

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


BUDGET_HELP = (
    "A per-session budget, NAME=LIMIT[:ACTION] (tokens, model_calls, tool_calls, seconds, errors; action "
    "record, warn or stop, default stop), e.g. --guard-budget tokens=200000; repeatable. It replaces the "
    "guard file's budget of that name, and turns the guard on without --guard."
)
_BUDGETS = "tracekit.guard_budgets"  # where the budgets wait for guard_observer (click's context meta)


def guard_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--guard [FILE]`` option (its value: None without it, '' alone, else the file) and the
    ``--guard-budget`` options beside it (read by ``guard_observer``)."""
    function = click.option("--guard-budget", multiple=True, metavar="NAME=LIMIT[:ACTION]", expose_value=False,
                            callback=_keep_budgets, help=BUDGET_HELP)(function)  # fmt: skip
    return click.option("--guard", "guard_file", is_flag=False, flag_value="", default=None, metavar="[FILE]",
                        help=GUARD_HELP)(function)  # fmt: skip


def guard_observer(guard_file: str | None) -> ExchangeObserver | None:
    """The live guard for ``--guard`` and ``--guard-budget`` (None without either); a bad guard file or
    budget exits with status 2."""
    context = click.get_current_context(silent=True)
    budgets: tuple[str, ...] = context.meta.get(_BUDGETS, ()) if context is not None else ()
    if guard_file is None and not budgets:
        return None
    from tracekit.guard import GuardConfigError, LiveGuard, load_guard_config, with_budgets  # only when asked for

    try:
        return LiveGuard(with_budgets(load_guard_config(Path(guard_file) if guard_file else None), budgets))
    except GuardConfigError as exc:
        raise click.UsageError(str(exc)) from exc


def _keep_budgets(context: click.Context, _: click.Parameter, value: tuple[str, ...]) -> None:
    context.meta[_BUDGETS] = value
