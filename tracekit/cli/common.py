"""What the commands share: exit statuses and error reporting (``InputError`` lives in tracekit.errors)."""

from __future__ import annotations

from tracekit.errors import EXIT_USAGE, InputError

EXIT_OK = 0
EXIT_CHECK_FAILED = 1

__all__ = ["EXIT_CHECK_FAILED", "EXIT_OK", "EXIT_USAGE", "InputError"]
