"""Scripted policies for the offline demo: the models ``scripted:reference`` and ``scripted:flawed``.

A policy decides what the fake upstream (``tracekit.testing.FakeUpstream``) answers to each request of a
case, as if it were a model: ``reference`` does what the seed's Pass line describes (derived from the
case's ``expect``, or hand-written in ``scripts/``); ``flawed`` shows the failure the seed's Fail line
describes (wrong tool, lost parameter, loop, fabrication, premature give-up, ...). No model is involved.

    plan = plan_for("flawed", case, library.catalog)      # the steps, with .failure and .note
    script = plan_script(plan, case)                      # a FakeUpstream script function
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracekit_demo.policies.derive import reference_plan
from tracekit_demo.policies.dialogue import Dialogue
from tracekit_demo.policies.flawed import generic_flawed_plan
from tracekit_demo.policies.scripts import FLAWED, REFERENCE
from tracekit_demo.policies.steps import Call, Calls, DateOf, Plan, PolicyError, Ref, Say

if TYPE_CHECKING:
    from tracekit.cases import Case, Catalog
    from tracekit.testing import FakeRequest, Reply, ScriptFunction

POLICIES = ("reference", "flawed")


def plan_for(policy: str, case: Case, catalog: Catalog) -> Plan:
    """The plan a policy follows in a case."""
    if policy == "reference":
        return REFERENCE.get(case.id) or reference_plan(case, catalog)
    if policy == "flawed":
        return FLAWED.get(case.id) or generic_flawed_plan(case, catalog)
    raise PolicyError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")


def plan_script(plan: Plan, case: Case) -> ScriptFunction:
    """A FakeUpstream script function answering as ``plan`` says in ``case``."""

    def answer(request: FakeRequest) -> Reply:
        return plan.reply(Dialogue(case, request))

    return answer


__all__ = ["POLICIES", "Call", "Calls", "DateOf", "Dialogue", "Plan", "PolicyError", "Ref", "Say", "plan_for",
           "plan_script"]
