"""Checks every command makes on the paths it is given, before it does any work.

Outputs: a file or folder a command will write is checked first, so that a mistake costs a clear line and
exit status 2, never a traceback after a long analysis. A missing folder is fine (it is created when the
output is written: ``tracekit.output``); a file standing where a folder must be, a folder standing where a
file must be, or a folder this process cannot write are refused. Writing is probed for real (a temporary
file created and removed in the nearest existing folder) rather than judged from permission bits, which
say nothing of read-only mounts and everything-is-allowed root. URLs are left to their filesystem.

Inputs: ``no_input_found`` / ``trace_files_in`` are the one message of every command given paths that hold
no trace, ``case_library`` the one of every ``--cases`` that holds no case.

Example::

    output_file("--json", "out/results.json")   # before the analysis; InputError when it cannot be written
    output_folder("--html", "report")
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from tracekit.cli.exits import InputError
from tracekit.errors import TracekitError
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
    _writable_parent(option, str(path), target.parent)


def output_folder(option: str, path: str | Path | None) -> None:
    """Refuse (``InputError``, exit 2) an output folder ``path`` given with ``option`` that cannot be made or
    written: a file in its place or in the way, a folder that cannot be written. A missing folder passes (it
    is created when written)."""
    target = _local_target(path)
    if target is None:
        return
    if target.exists() and not target.is_dir():
        raise InputError(f"{option} {path}: {target} is a file, not a folder; give a folder (it is created if missing)")
    _writable_parent(option, str(path), target)


def no_input_found(path: str | Path) -> InputError:
    """The one error (exit status 2) of a command given a path that holds no trace file (``analyze`` and
    ``diff`` say it the same way from ``tracekit.analyze.sources``; the importers name what they read)."""
    return InputError(f"no trace files found in {path} (a trace file ends in .jsonl)")


def trace_files_in(paths: Iterable[str | Path]) -> list[Path]:
    """The trace files in ``paths`` (files, folders, URLs), refusing (exit status 2) a path that does not
    exist or holds none: one path without traces is a mistake even when another has some."""
    from tracekit.trace import trace_files  # the trace models load when a command runs, not for --help

    found: list[Path] = []
    for path in paths:
        try:
            files = trace_files([path])
        except TracekitError as exc:
            raise InputError(str(exc)) from exc
        if not files:
            raise no_input_found(path)
        found.extend(files)
    return found


def case_library(option: str, cases_dir: str | Path | None) -> None:
    """Refuse (exit status 2), before any work, a case library that is missing or holds no case file: one
    line instead of a warning for every trace whose case "is not in the library". URLs are checked when
    they are loaded."""
    if cases_dir is None:
        return
    where = local(str(cases_dir))
    if is_url(where):
        return
    from tracekit.cases.loader import case_files  # the case models load when a command runs, not for --help

    folder = Path(where)
    named = f"{option} {cases_dir}" if option else str(cases_dir)
    if not folder.exists():
        raise InputError(f"{named}: no such folder; give the case library's folder, e.g. cases")
    if not case_files(folder):
        raise InputError(f"{named}: this folder holds no cases (a case is a .yaml file such as b2/<ID>.yaml); "
                         "give the case library's folder, e.g. cases")  # fmt: skip


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
