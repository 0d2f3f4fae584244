"""Every way another package extends tracekit, declared in one place.

Each extension point has a decorator (for code tracekit imports anyway, such as a project's conftest or
a package it imports) and an entry-point group (for an installed package: tracekit finds it without
being told). ``tracekit plugins`` lists what is installed.

============== ============================ ================================================= ==========================
point          entry-point group            an entry point names                              decorator
============== ============================ ================================================= ==========================
model clients  ``tracekit.model_clients``   a factory: model name -> ``ModelClient``          ``register_model_client``
detectors      ``tracekit.detectors``       a detector function or ``DetectorStream`` class   ``detector``
importers      ``tracekit.importers``       a function ``(paths, problems) -> traces``        ``importer``
providers      ``tracekit.providers``       a provider (a ``ProviderBase`` subclass)          ``register_provider``
case checks    ``tracekit.checks``          a function ``(run, options) -> checks``           ``case_check``
matchers       ``tracekit.matchers``        a function ``(expected, value, context)``         ``argument_matcher``
============== ============================ ================================================= ==========================

An entry point's name is what it adds: the model-name prefix, the finding kind, the ``tracekit import``
command, the provider's ``NAME``. In a package's ``pyproject.toml``::

    [project.entry-points."tracekit.detectors"]
    long_run = "my_checks.detectors:long_run"

    [project.entry-points."tracekit.providers"]
    plain = "my_wire.plain:Plain"

Each decorator's docstring has an example that ``tests/test_plugins.py`` runs as printed. Where each
point is used: model clients by ``tracekit run`` and the judge; detectors by ``tracekit analyze``, the
guard and the pytest plugin (their findings are in the analyze JSON like the built-in ones); importers
by ``tracekit import NAME``; case checks and matchers by every command that judges a case, when a case
names them (``expect.checks``, an argument's ``custom`` matcher); providers by ``tracekit record`` and
``tracekit replay`` (the proxy serves their ``ROUTE``) and by everything that reads their traces.
``docs/architecture.md`` walks through them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracekit import entry_points
from tracekit.lazy import lazy_exports

if TYPE_CHECKING:
    from tracekit.analyze.detectors import detector
    from tracekit.analyze.extensions import argument_matcher, case_check
    from tracekit.clients import register_model_client
    from tracekit.importers.registry import importer
    from tracekit.providers import register_provider


@dataclass(frozen=True)
class ExtensionPoint:
    """One way to extend tracekit: its entry-point group, its decorator and what an entry point names."""

    name: str
    group: str
    decorator: str
    """``module:function`` of the decorator (imported only when asked for)."""
    names: str
    """What an entry point of the group names (its value)."""

    def installed(self) -> dict[str, str]:
        """The installed entry points of the group: name -> ``module:attribute``, nothing imported."""
        return entry_points.values(self.group)

    def decorator_function(self) -> Any:
        """The decorator itself."""
        module, _, function = self.decorator.partition(":")
        return getattr(importlib.import_module(module), function)


EXTENSION_POINTS = (
    ExtensionPoint("model clients", entry_points.MODEL_CLIENTS, "tracekit.clients:register_model_client",
                   "a factory of a model name -> ModelClient"),
    ExtensionPoint("detectors", entry_points.DETECTORS, "tracekit.analyze.detectors:detector",
                   "a detector function or DetectorStream class"),
    ExtensionPoint("importers", entry_points.IMPORTERS, "tracekit.importers.registry:importer",
                   "a function (paths, problems) -> ImportedTrace list"),
    ExtensionPoint("providers", entry_points.PROVIDERS, "tracekit.providers:register_provider",
                   "a provider (ProviderBase subclass or instance)"),
    ExtensionPoint("case checks", entry_points.CHECKS, "tracekit.analyze.extensions:case_check",
                   "a function (run, options) -> Check list, run when a case's expect.checks names it"),
    ExtensionPoint("matchers", entry_points.MATCHERS, "tracekit.analyze.extensions:argument_matcher",
                   "a function (expected, value, context) -> (ok, why), for an argument's custom matcher"),
)  # fmt: skip
"""Every extension point, in the order ``tracekit plugins`` lists them."""

__all__ = [
    "EXTENSION_POINTS", "ExtensionPoint", "argument_matcher", "case_check", "detector", "importer",
    "register_model_client", "register_provider",
]  # fmt: skip
__getattr__, __dir__ = lazy_exports(__name__, {
    "tracekit.analyze.detectors": ["detector"],
    "tracekit.analyze.extensions": ["argument_matcher", "case_check"],
    "tracekit.clients": ["register_model_client"],
    "tracekit.importers.registry": ["importer"],
    "tracekit.providers": ["register_provider"],
})  # fmt: skip
