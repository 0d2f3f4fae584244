"""Scripted policies for the offline demo: ``--model scripted:reference`` and ``--model scripted:flawed``.

A policy decides what the fake upstream (``tracekit.testing.FakeUpstream``) answers to each request of a
case, as if it were a model: ``reference`` does what the seed's Pass line describes (derived from the
case's ``expect``, or hand-written in ``scripts/``); ``flawed`` shows the failure the seed's Fail line
describes (wrong tool, lost parameter, loop, fabrication, premature give-up, ...). No model is involved.

    script = policy_script("reference", case, library)    # a FakeUpstream script function
    plan = plan_for("flawed", case, library.catalog)      # the steps, with .failure and .note
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracekit.runner.policies.dialogue import Dialogue
from tracekit.runner.policies.steps import Call, Calls, DateOf, Plan, PolicyError, Ref, Say

if TYPE_CHECKING:
    from tracekit.cases.catalog import Catalog
    from tracekit.cases.loader import CaseLibrary
    from tracekit.cases.model import Case
    from tracekit.testing import FakeRequest, Reply, ScriptFunction

POLICIES = ("reference", "flawed")


def plan_for(policy: str, case: Case, catalog: Catalog) -> Plan:
    """The plan a policy follows in a case."""
    from tracekit.runner.policies.derive import reference_plan
    from tracekit.runner.policies.flawed import generic_flawed_plan
    from tracekit.runner.policies.scripts import FLAWED, REFERENCE

    if policy == "reference":
        return REFERENCE.get(case.id) or reference_plan(case, catalog)
    if policy == "flawed":
        return FLAWED.get(case.id) or generic_flawed_plan(case, catalog)
    raise PolicyError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")


def policy_script(policy: str, case: Case, library: CaseLibrary) -> ScriptFunction:
    """A FakeUpstream script function answering as ``policy`` would in ``case``."""
    plan = plan_for(policy, case, library.catalog)

    def answer(request: FakeRequest) -> Reply:
        return plan.reply(Dialogue(case, request))

    return answer


__all__ = ["POLICIES", "Call", "Calls", "DateOf", "Dialogue", "Plan", "PolicyError", "Ref", "Say", "plan_for",
           "policy_script"]
