"""The rule-based judge of the demo (``scripted:judge``): keyword heuristics, not a model.

- ``heuristic``: the families of rules and ``heuristic_rule``, the answer to one judge prompt;
- ``heuristic_tasks``: the families on how a task was carried out;
- ``heuristic_text``: the sentence and grounding helpers they share.
"""

from tracekit_demo.judge.heuristic import FAMILIES, TAG, family_of, heuristic_rule

__all__ = ["FAMILIES", "TAG", "family_of", "heuristic_rule"]
