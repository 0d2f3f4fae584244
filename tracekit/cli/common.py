"""What the commands share: exit statuses and error reporting."""

from __future__ import annotations

import click

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2


class InputError(click.ClickException):
    """Bad usage or unreadable input: printed as ``Error: ...`` and exits 2."""

    exit_code = EXIT_USAGE
