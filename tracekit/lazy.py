"""Lazy exports (PEP 562): a package names its public names and the module of each, and each is imported
the first time it is asked for, so that importing one part of a package does not load the others.

Example (a package's ``__init__.py``)::

    from tracekit.lazy import lazy_exports

    __all__ = ["Recorder", "request_key"]
    __getattr__, __dir__ = lazy_exports(__name__, {"recorder": ["Recorder"], "keys": ["request_key"]})

A name is looked up once and then kept in the package's namespace. ``tests/test_lazy_exports.py`` checks
that every name of every ``__all__`` resolves, so that a map cannot go stale.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, homes: Mapping[str, Iterable[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, which exports each name of ``homes[module]`` from its
    submodule ``package.module``, or from ``module`` itself when that names a module of the same top-level
    package (``"tracekit.results.model"``)."""
    top = package.split(".")[0]
    where = {
        name: module if module.split(".")[0] == top and "." in module else f"{package}.{module}"
        for module, names in homes.items()
        for name in names
    }

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
