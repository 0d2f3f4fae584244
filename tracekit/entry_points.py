"""Installed extensions: the entry-point groups through which another package adds to tracekit, read once.

Each group's entry points name an object of the package that offers it (``name = module:attribute``).
``installed(group)`` lists them without importing anything; ``load(group)`` imports each once and gives
``(name, object)`` pairs, raising ``PluginError`` (which names the entry point and the package's own error)
for one that cannot be imported. What each group's objects are, and the decorator that registers the same
from inside a package, is declared in ``tracekit.plugins``.

Example::

    from tracekit.entry_points import DETECTORS, installed

    names = installed(DETECTORS)   # e.g. ["slow_start"]
"""

from __future__ import annotations

import threading
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from tracekit.errors import PluginError

#: Model-name prefixes -> model-client factories (``tracekit.clients``).
MODEL_CLIENTS = "tracekit.model_clients"
#: Finding kinds -> detectors (``tracekit.analyze.detectors``).
DETECTORS = "tracekit.detectors"
#: ``tracekit import NAME`` -> importers (``tracekit.importers.registry``).
IMPORTERS = "tracekit.importers"
#: Wire-format names -> providers (``tracekit.providers``).
PROVIDERS = "tracekit.providers"
#: Case-check names -> checks a case's ``expect.checks`` names (``tracekit.analyze.extensions``).
CHECKS = "tracekit.checks"
#: Argument-matcher names -> matchers an expected call's ``custom`` matcher names (``tracekit.analyze.extensions``).
MATCHERS = "tracekit.matchers"
#: Every group tracekit reads.
GROUPS = (MODEL_CLIENTS, DETECTORS, IMPORTERS, PROVIDERS, CHECKS, MATCHERS)

# Re-entrant: an extension's module may import the tracekit package that loads its group (a detector
# imports tracekit.analyze.detectors, which loads the installed detectors on import).
_lock = threading.RLock()
_loaded: dict[tuple[str, str], Any] = {}
_loading: set[tuple[str, str]] = set()


@cache
def _installed() -> dict[str, tuple[EntryPoint, ...]]:
    # One scan of the installed distributions per process for every group (a scan costs about ten
    # milliseconds in an environment of two hundred packages).
    every = entry_points()
    return {group: tuple(sorted(every.select(group=group), key=lambda point: point.name)) for group in GROUPS}


def _points(group: str) -> tuple[EntryPoint, ...]:
    return _installed()[group]


def installed(group: str) -> list[str]:
    """The names of ``group``'s entry points, without importing them."""
    return [point.name for point in _points(group)]


def values(group: str) -> dict[str, str]:
    """Each entry point's name -> where it points (``module:attribute``), without importing them."""
    return {point.name: point.value for point in _points(group)}


def load(group: str, name: str | None = None) -> list[tuple[str, Any]]:
    """``(name, object)`` of each entry point of ``group`` (only ``name``'s when given), each imported once."""
    found = []
    for point in _points(group):
        if name is not None and point.name != name:
            continue
        with _lock:
            key = (group, point.name)
            if key in _loading:  # asked again while its own module is being imported: the outer call has it
                continue
            if key not in _loaded:
                _loading.add(key)
                try:
                    _loaded[key] = _load(group, point)
                finally:
                    _loading.discard(key)
            found.append((point.name, _loaded[key]))
    return found


def _load(group: str, point: EntryPoint) -> Any:
    try:
        return point.load()
    except Exception as exc:  # any failure of someone else's import is theirs to fix, named here
        raise PluginError(
            f"{point.name!r} is installed as {point.value!r} (entry point group {group}) but cannot be "
            f"loaded: {type(exc).__name__}: {exc}; fix or uninstall the package that provides it"
        ) from exc
