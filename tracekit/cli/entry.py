"""The ``tracekit`` command's entry point: ``tracekit record`` runs with CPython's small-object allocator off
(``PYTHONMALLOC=malloc``), so that the memory of expired sessions goes back to the system (issue 31 item 3).

Why: pymalloc carves small objects out of 1 MiB arenas and gives an arena back only when every object in it
is gone. A recording proxy serving a burst of sessions also makes a few objects that outlive them (a timer, an
HTTP date header cached by aiohttp, a counter's new value), and each keeps its whole arena: after 20,000 idle
sessions expired, RSS stayed 7-15 MB above its baseline. With the C allocator a survivor keeps its 4 KiB
page, and ``malloc_trim`` (``tracekit.proxy.memory_release``) returns the rest: RSS comes back within 3-4 MB
(``benchmarks/results/proxy_attacks.md`` section 6). The cost is 6-16% more CPU per request under load,
which a proxy waiting seconds for each model answer does not feel.

The allocator is fixed when the interpreter starts, so ``tracekit record`` executes itself again, once, with
the same arguments and ``PYTHONMALLOC=malloc``, before it imports anything (the process keeps its id). A
``PYTHONMALLOC`` already set is left alone (``PYTHONMALLOC=pymalloc tracekit record ...`` keeps pymalloc), and
so is Windows. Inside another program (``CliRunner``, the pytest plugin) nothing is executed again.

Example::

    allocator_restart(["tracekit", "record", "--port", "0"], ["python", "tracekit", "record", "--port", "0"],
                      {}, "python", "posix")
    # -> ("python", ["python", "tracekit", "record", "--port", "0"], {"PYTHONMALLOC": "malloc"})
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

#: Commands that run a long-lived proxy and so give memory back when sessions expire.
LONG_RUNNING = frozenset({"record"})


def allocator_restart(
    argv: Sequence[str], orig_argv: Sequence[str], environ: Mapping[str, str], executable: str, system: str
) -> tuple[str, list[str], dict[str, str]] | None:
    """What to execute again (program, arguments, environment) for this command line, or None to go on."""
    if system != "posix" or "PYTHONMALLOC" in environ or not executable or len(argv) < 2:
        return None
    if argv[1] not in LONG_RUNNING or {"-h", "--help"}.intersection(argv[2:]):
        return None
    return executable, [executable, *orig_argv[1:]], {**environ, "PYTHONMALLOC": "malloc"}


def main() -> None:
    """Run the ``tracekit`` command (see the module docstring)."""
    restart = allocator_restart(sys.argv, sys.orig_argv, os.environ, sys.executable, os.name)
    if restart is not None:
        sys.stdout.flush()
        os.execve(*restart)
    # Imported after the decision: the command's modules are loaded once, by the process that runs it.
    from tracekit.cli.main import cli

    cli(prog_name="tracekit")


__all__ = ["LONG_RUNNING", "allocator_restart", "main"]
