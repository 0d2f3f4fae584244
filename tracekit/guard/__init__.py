"""The live guard: the offline detectors and per-session budgets run inside the proxy as a session happens.

- ``GuardConfig`` / ``load_guard_config`` / ``with_budgets``: the guard file (findings -> action, budgets,
  detector options) and budgets given on the command line;
- ``GuardSession``: one session's records, detectors fed call by call, budgets, decisions;
- ``SessionPlan``: what a guard file asks of every session (acting and recording detectors, budgets), once;
- ``LiveGuard``: the proxy's exchange observer (``ProxyConfig.observer``), one ``GuardSession`` per session;
- the ``warn`` note goes into a request in the shape of its API by the provider (``Provider.with_note``).

``docs/guard.md`` is the user's guide.
"""

from tracekit.guard.config import GuardConfig, GuardConfigError, load_guard_config, with_budgets
from tracekit.guard.observer import LiveGuard
from tracekit.guard.session import GuardSession, SessionPlan, Verdict

__all__ = [
    "GuardConfig",
    "GuardConfigError",
    "GuardSession",
    "LiveGuard",
    "SessionPlan",
    "Verdict",
    "load_guard_config",
    "with_budgets",
]
