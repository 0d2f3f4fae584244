"""The demo's model client: ``scripted:reference``, ``scripted:flawed`` and ``scripted:judge``.

``scripted_client`` is the factory the entry point ``tracekit.model_clients`` names for the prefix
``scripted`` (pyproject.toml); tracekit loads it the first time it is asked for a ``scripted:`` model.
Every use gets a fake upstream of its own (``tracekit.testing.FakeEndpoint``): one per job of a run, one
per judge.
"""

from __future__ import annotations

from tracekit.clients import ModelClient, ModelUse
from tracekit.errors import ModelClientError
from tracekit.judge.rules import rule_judge
from tracekit.testing import FakeEndpoint, FakeModelClient
from tracekit_demo.judge.heuristic import family_of, heuristic_rule
from tracekit_demo.policies import POLICIES, plan_for, plan_script

PREFIX = "scripted"
#: The rule-based judge's model name: verdicts it makes are kept under it.
JUDGE_MODEL = f"{PREFIX}:judge"
#: The API key the demo's requests carry (the fake upstream takes any key; a real one never leaves).
DEMO_API_KEY = "tracekit-scripted-no-key"
#: ``header.meta.policy.made_by`` of every trace a policy makes.
MADE_BY = "tracekit scripted policy on the fake upstream; no model was called"


def scripted_client(model: str) -> ModelClient:
    """The client of ``scripted:<name>``: a policy (reference, flawed) or the rule-based judge (judge)."""
    name = model.partition(":")[2]
    if name in POLICIES:
        return PolicyClient(name)
    if model == JUDGE_MODEL:
        return RuleJudgeClient()
    raise ModelClientError(f"unknown scripted policy {name!r}; expected one of {', '.join(POLICIES)} "
                           f"(runs) or judge (the judge), as in {PREFIX}:{POLICIES[0]}")


class PolicyClient(FakeModelClient):
    """A scripted policy playing the agent's model: the plan of each case, answered turn by turn."""

    api_key = DEMO_API_KEY

    def __init__(self, policy: str) -> None:
        super().__init__()
        self.policy = policy

    def declines(self, use: ModelUse) -> str | None:
        """A policy plays an agent, never the judge."""
        if use.purpose != "agent":
            return f"the {self.policy} policy plays an agent; judge with {JUDGE_MODEL}"
        return None

    def open(self, use: ModelUse) -> FakeEndpoint:
        """A fake upstream answering with the policy's plan for ``use.case``; the plan's failure and note go
        into the trace header's ``meta.policy``."""
        if use.case is None or use.catalog is None:
            raise ModelClientError(f"{PREFIX}:{self.policy} plays the agent of one case at a time (tracekit run)")
        plan = plan_for(self.policy, use.case, use.catalog)
        meta = {"policy": {"name": self.policy, "failure": plan.failure, "note": plan.note, "made_by": MADE_BY}}
        return FakeEndpoint(plan_script(plan, use.case), meta)


class RuleJudgeClient(FakeModelClient):
    """The rule-based judge (``tracekit_demo.judge``) answering judge prompts."""

    api_key = DEMO_API_KEY

    def __init__(self) -> None:
        super().__init__(rule_judge(heuristic_rule))

    def declines(self, use: ModelUse) -> str | None:
        """The judge plays no agent, and judges only the cases it has rules for."""
        if use.purpose != "judge":
            return f"unknown scripted policy 'judge'; expected one of {', '.join(POLICIES)}"
        if use.case is not None and family_of(use.case.id) is None:
            return f"the scripted judge has no rule for {use.case.id}"
        return None
