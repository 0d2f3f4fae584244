"""Checks every command makes on the paths it is given, before it does any work.

Outputs: a file or folder a command will write is checked first, so that a mistake costs a clear line and
exit status 2, never a traceback after a long analysis. A missing folder is fine (it is created when the
output is written: ``tracekit.output``); a file standing where a folder must be, a folder standing where a
file must be, or a folder this process cannot write are refused. Writing is probed for real (a temporary
file created and removed in the nearest existing folder) rather than judged from permission bits, which
say nothing of read-only mounts and everything-is-allowed root. URLs are left to their filesystem.

Inputs: ``no_input_found`` is the one message of every command given paths that hold nothing to read.

Example::

    output_file("--json", "out/results.json")   # before the analysis; InputError when it cannot be written
    output_folder("--html", "report")
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tracekit.errors import InputError
from tracekit.storage import is_url, local


def output_file(option: str, path: str | Path | None) -> None:
    """Refuse (``InputError``, exit 2) an output file ``path`` given with ``option`` that cannot be written:
    a folder in its place, a file in the way of its folder, a folder that cannot be written. ``None``, ``-``
    (stdout) and URLs pass."""
    target = _local_target(path)
    if target is None:
        return
    if target.is_dir():
        raise InputError(f"{option} {path}: {target} is a folder; give a file name, e.g. {target / 'results.json'}")
    _writable_parent(option, path, target.parent)


def output_folder(option: str, path: str | Path | None) -> None:
    """Refuse (``InputError``, exit 2) an output folder ``path`` given with ``option`` that cannot be made or
    written: a file in its place or in the way, a folder that cannot be written. A missing folder passes (it
    is created when written)."""
    target = _local_target(path)
    if target is None:
        return
    if target.exists() and not target.is_dir():
        raise InputError(f"{option} {path}: {target} is a file, not a folder; give a folder (it is created if missing)")
    _writable_parent(option, path, target)


def no_input_found(paths: tuple[str, ...] | list[str] | list[Path], what: str = "trace files (*.jsonl)") -> InputError:
    """The error of every command whose input paths hold nothing to read (exit status 2)."""
    named = ", ".join(str(path) for path in paths)
    return InputError(f"no {what} found in {named}; give files or folders that hold them")


def _local_target(path: str | Path | None) -> Path | None:
    if path is None or str(path) == "-":
        return None
    where = local(str(path))
    if is_url(where):
        return None
    return Path(where)


def _writable_parent(option: str, given: str | Path, folder: Path) -> None:
    """The nearest existing folder at or above ``folder`` must be a folder this process can create files in."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"{option} {given}: {existing} is a file, so no folder can be made under it; "
                         "give a path in a folder")  # fmt: skip
    try:
        handle, probe = tempfile.mkstemp(prefix=".tracekit-probe.", dir=existing)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InputError(f"{option} {given}: cannot write in {existing} ({reason}); "
                         "give a folder you can write") from exc
    os.close(handle)
    os.unlink(probe)
