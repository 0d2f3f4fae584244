"""The combined verdict of a case scored "auto + LLM-judge": each part shown, the stricter one decides.

- A ``fail`` in either part fails the case: the stricter of the two, whatever the other part says.
- Otherwise a part with no verdict yet (``pending``, or a judge ``error``) leaves the case ``pending``:
  an error is never counted as a pass.
- Otherwise the stricter grade: pass < acceptable < fail.

A case scored ``judge`` alone has no automatic part (``auto=None``) unless it also lists machine checks;
a case scored ``auto`` has no judged part (``judged=None``).
"""

from __future__ import annotations

from typing import Any

#: Grades from the most lenient to the strictest.
STRICTNESS: dict[str, int] = {"pass": 0, "acceptable": 1, "fail": 2}

#: Part results that hold no verdict yet.
UNDECIDED = frozenset({"pending", "error"})


def stricter(first: str, second: str) -> str:
    """The stricter of two grades (pass < acceptable < fail)."""
    return first if STRICTNESS[first] >= STRICTNESS[second] else second


def combine(auto: str | None, judged: str | None) -> str:
    """The case verdict from its automatic part and its judged part (either may be absent: None).

    >>> combine("pass", "fail"), combine("fail", "error"), combine("acceptable", "pass"), combine("pass", "error")
    ('fail', 'fail', 'acceptable', 'pending')
    """
    parts = [part for part in (auto, judged) if part is not None]
    if not parts:
        return "pending"
    if "fail" in parts:
        return "fail"
    if any(part in UNDECIDED or part not in STRICTNESS for part in parts):
        return "pending"
    result = parts[0]
    for part in parts[1:]:
        result = stricter(result, part)
    return result


def combined_verdict(auto: str | None, judged_check: dict[str, Any] | None) -> dict[str, Any]:
    """``{"result", "parts": {"auto", "judge"}}``: the combined result with both parts shown, the judged part
    with the model and template version that produced it."""
    judged = judged_check["result"] if judged_check is not None else None
    parts: dict[str, Any] = {"auto": auto, "judge": judged}
    if judged_check is not None:
        meta = judged_check.get("judge") or {}
        parts["judge_model"] = meta.get("model")
        parts["judge_template"] = meta.get("template")
    return {"result": combine(auto, judged), "parts": parts}
