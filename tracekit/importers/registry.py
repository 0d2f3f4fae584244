"""Importers added from outside: ``tracekit import NAME FILE... --out DIR`` for each one registered.

An importer is a function of the files (or folders) given and a ``problems`` list: it returns one
``ImportedTrace`` per transcript it read (build them with ``build_trace`` or ``TraceBuilder``) and appends
``file:position: what`` for each part it could not read (then ``tracekit import`` writes the rest and
exits 2). It is registered with ``@importer(name)`` in a module tracekit imports, or by an entry point of
the group ``tracekit.importers`` (name: the command, value: the function) in an installed package.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from tracekit.entry_points import IMPORTERS, installed, load
from tracekit.errors import PluginError
from tracekit.importers.common import ImportedTrace

Importer = Callable[[Sequence[Path], list[str]], list[ImportedTrace]]
"""Files or folders and a list to append problems to -> the traces read."""
_Importer = TypeVar("_Importer", bound=Importer)

_registered: dict[str, Importer] = {}


def importer(name: str) -> Callable[[_Importer], _Importer]:
    """Register the decorated function as ``tracekit import NAME`` (its docstring is the command's help).

    >>> from tracekit.importers.common import build_trace, new_header
    >>> from tracekit.importers.registry import importer, importer_named
    >>> @importer("lines")
    ... def import_lines(paths, problems):
    ...     "FILE is plain text, one user message a line: one trace per file."
    ...     return [build_trace(new_header(path.stem, "import:lines"),
    ...                         [{"role": "user", "content": line} for line in path.read_text().splitlines()])
    ...             for path in paths]
    >>> importer_named("lines") is import_lines
    True
    """
    if not name or name != name.strip() or " " in name:
        raise ValueError(f"an importer's name is one word (the command's name), not {name!r}")

    def register(function: _Importer) -> _Importer:
        _registered[name] = function
        return function

    return register


def importer_names() -> list[str]:
    """Every importer registered or installed, without loading the installed ones."""
    return sorted({*_registered, *installed(IMPORTERS)})


def importer_named(name: str) -> Importer | None:
    """The importer called ``name`` (registered, else installed; None when there is none). ``PluginError``
    when the installed one cannot be loaded or is not a function."""
    if name in _registered:
        return _registered[name]
    for point, function in load(IMPORTERS, name):
        if not callable(function):
            raise PluginError(f"the importer {point!r} (entry point group {IMPORTERS}) is {function!r}, "
                              "not a function of (paths, problems)")
        return _registered.setdefault(point, function)
    return None
