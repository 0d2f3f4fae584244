"""Case checks and argument matchers that another package adds.

A case names them: ``expect.checks: [{name: NAME, value: OPTIONS}]`` runs the check registered as NAME on
the trace; ``args: {field: {custom: {name: NAME, value: EXPECTED}}}`` checks one argument of an expected
call with the matcher registered as NAME. A package registers them with ``@case_check`` and
``@argument_matcher`` (code tracekit imports anyway) or through the entry-point groups
``tracekit.checks`` and ``tracekit.matchers`` (an installed package; ``tracekit plugins`` lists them).

A name no installed package offers is never a silent pass: the check's result is ``error``, naming what
is missing and how to list what is installed, which leaves the verdict undecided.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tracekit.analyze.check import Check
from tracekit.entry_points import CHECKS, MATCHERS, load
from tracekit.errors import PluginError

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.analyze.matchers import MatchContext
    from tracekit.cases import NamedExtension

CaseCheck = Callable[["CaseRun", Any], Iterable[Check]]
"""A case check: ``(run, options) -> checks`` (``options`` is the case's ``value``, ``None`` when absent)."""
ArgumentMatcher = Callable[[Any, Any, "MatchContext"], tuple[bool, str]]
"""An argument matcher: ``(expected, value, context) -> (ok, why)``; ``value`` is ``MISSING`` when absent."""

CASE_CHECKS: dict[str, CaseCheck] = {}
"""Registered case checks by name."""
ARGUMENT_MATCHERS: dict[str, ArgumentMatcher] = {}
"""Registered argument matchers by name."""


def case_check(name: str) -> Callable[[CaseCheck], CaseCheck]:
    """Register a case check under ``name``: a case runs it with ``expect.checks: [{name: ..., value: ...}]``.

    >>> from tracekit.analyze.check import Check
    >>> from tracekit.analyze.extensions import CASE_CHECKS, case_check
    >>> @case_check("short_answer")
    ... def short_answer(run, options):
    ...     "The final answer is at most ``options['limit']`` characters."
    ...     answer = run.final_answer
    ...     limit = (options or {}).get("limit", 200)
    ...     result = "pass" if len(answer) <= limit else "fail"
    ...     return [Check("short_answer", result, f"the answer has {len(answer)} characters (limit {limit})")]
    >>> CASE_CHECKS["short_answer"] is short_answer
    True
    """

    def register(function: CaseCheck) -> CaseCheck:
        CASE_CHECKS[name] = function
        return function

    return register


def argument_matcher(name: str) -> Callable[[ArgumentMatcher], ArgumentMatcher]:
    """Register an argument matcher under ``name``: an expected call uses it with
    ``args: {field: {custom: {name: ..., value: ...}}}``.

    >>> from tracekit.analyze.extensions import ARGUMENT_MATCHERS, argument_matcher
    >>> @argument_matcher("iata_code")
    ... def iata_code(expected, value, context):
    ...     "A three-letter airport code (``expected``: the code, or null for any)."
    ...     ok = isinstance(value, str) and len(value) == 3 and value.isupper() and value in (expected or value)
    ...     return ok, f"expected an IATA code{' ' + expected if expected else ''}, got {value!r}"
    >>> ARGUMENT_MATCHERS["iata_code"]("SFO", "SFO", None)
    (True, "expected an IATA code SFO, got 'SFO'")
    """

    def register(function: ArgumentMatcher) -> ArgumentMatcher:
        ARGUMENT_MATCHERS[name] = function
        return function

    return register


def run_case_checks(run: CaseRun) -> list[Check]:
    """The checks the case's ``expect.checks`` names, each run on the trace; ``error`` for one that is not
    installed or that raises (never a pass)."""
    checks: list[Check] = []
    for wanted in run.case.expect.checks:
        function, problem = _find(CASE_CHECKS, CHECKS, "check", wanted.name)
        if function is None:
            checks.append(Check(wanted.name, "error", problem))
            continue
        try:
            checks.extend(function(run, wanted.value))
        except Exception as exc:  # a package's own bug: named, and the verdict stays undecided
            checks.append(Check(wanted.name, "error", f"the check {wanted.name!r} raised {type(exc).__name__}: {exc}"))
    return checks


def match_custom(wanted: NamedExtension, value: Any, context: MatchContext) -> tuple[bool, str]:
    """Apply the matcher ``wanted`` names to ``value``; a matcher not installed does not match, and says so."""
    function, problem = _find(ARGUMENT_MATCHERS, MATCHERS, "argument matcher", wanted.name)
    if function is None:
        return False, problem
    try:
        ok, why = function(wanted.value, value, context)
    except Exception as exc:  # a package's own bug: named in the check's evidence
        return False, f"the matcher {wanted.name!r} raised {type(exc).__name__}: {exc}"
    return bool(ok), str(why)


def _find(registry: dict[str, Any], group: str, what: str, name: str) -> tuple[Any, str]:
    """The registered function, else the installed entry point of that name; else why there is none."""
    if name not in registry:
        try:
            for entry_name, function in load(group, name):
                registry.setdefault(entry_name, function)
        except PluginError as exc:
            return None, str(exc)
    if name in registry:
        return registry[name], ""
    return None, (f"no {what} named {name!r} is registered: install the package that offers it (entry point "
                  f"group {group}); `tracekit plugins` lists what is installed")
