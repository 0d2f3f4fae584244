"""How a command ends: its exit status (DESIGN.md "Contracts") and the error for bad usage or input.

Every command raises ``InputError`` for input it cannot use; click prints it as ``Error: ...`` (the
message as text, never markup) and exits with ``EXIT_USAGE``. A ``TracekitError`` from below the CLI is
turned into one where the command calls the engine, so that no traceback reaches a user.
"""

from __future__ import annotations

import click

from tracekit.errors import TracekitError

#: The command ran.
EXIT_OK = 0
#: A check the command was asked to enforce failed (``--fail-on``, ``--baseline``).
EXIT_CHECK_FAILED = 1
#: Bad usage or unreadable input.
EXIT_USAGE = 2


class InputError(TracekitError, click.ClickException):
    """Bad usage or unreadable input: printed as ``Error: ...`` and exits 2."""

    exit_code = EXIT_USAGE
