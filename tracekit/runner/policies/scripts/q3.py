"""Hand-written plans (placeholder)."""

from __future__ import annotations

from tracekit.runner.policies.steps import Plan

REFERENCE: dict[str, Plan] = {}
FLAWED: dict[str, Plan] = {}
