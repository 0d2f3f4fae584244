"""Why a trace failed, and where: invariants from tool schemas and domain policies, and the critical step.

- ``schema_rules``: every call checked against the JSON Schema its own request declared (no configuration);
- ``policy`` / ``policy_rules`` / ``open_task``: a domain's rules from a policy file (``--policy``);
- ``talked_past``: tool errors the agent talked past;
- ``critical``: the critical step, its AgentRx category (Barke et al. 2026, arXiv 2602.02475) and evidence;
- ``model``: the ``diagnosis`` of the analyze JSON.

``tracekit.analyze`` calls ``trace_violations`` and ``diagnose`` for each trace. See ``docs/diagnosis.md``.
"""

from tracekit.diagnose.conversation import CallStep, Conversation, Turn
from tracekit.diagnose.critical import diagnose
from tracekit.diagnose.invariants import trace_violations
from tracekit.diagnose.policy import Policy, PolicyError, load_policy, policy_schema
from tracekit.diagnose.violation import CATEGORIES, Category, Violation
from tracekit.results.diagnosis import Diagnosis, EvidenceStep

__all__ = [
    "CATEGORIES",
    "CallStep",
    "Category",
    "Conversation",
    "Diagnosis",
    "EvidenceStep",
    "Policy",
    "PolicyError",
    "Turn",
    "Violation",
    "diagnose",
    "load_policy",
    "policy_schema",
    "trace_violations",
]
