"""Hand-written plans, per case, where deriving from ``expect`` is not enough (see each module).

Each module defines ``REFERENCE`` and ``FLAWED``: case id -> ``Plan``. A case missing from ``REFERENCE``
gets the plan derived from its ``expect``; one missing from ``FLAWED`` gets the generic flawed plan.
"""

from __future__ import annotations

from tracekit_demo.policies.scripts import b2, c4, q1, q3, traps
from tracekit_demo.policies.steps import Plan

REFERENCE: dict[str, Plan] = {}
FLAWED: dict[str, Plan] = {}


def _register() -> None:
    for module in (b2, q3, q1, c4, traps):
        for name, table in (("REFERENCE", REFERENCE), ("FLAWED", FLAWED)):
            for case_id, plan in getattr(module, name).items():
                if case_id in table:
                    raise ValueError(f"{module.__name__}: {case_id} has two {name.lower()} plans")
                table[case_id] = plan


_register()

__all__ = ["FLAWED", "REFERENCE"]
