"""Results for the report tests, in the shape of the analyze JSON (``tracekit.results.model``).

Entries are plain dicts so that tests can copy and change them; ``complete`` validates them with the model
and adds the summary analyze would compute (``tracekit.analyze.summary.build_summary``), so every figure a
report shows comes from the same code as in a real run.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from tracekit.analyze.summary import build_summary
from tracekit.results.model import Results, TraceResult

_CASE_ID = re.compile(r"^(?P<dim>[A-Z][A-Z0-9])-(?P<cat>[A-Z]{2})-\d+$")


def scores(total: float = 100.0, steps: int = 2, tokens: int = 40, attribution: dict[str, Any] | None = None
           ) -> dict[str, Any]:
    """A verdict's scores (seed 003 and seed 001), with an attribution for a failing one."""
    value: dict[str, Any] = {
        "tool_use": {"total": total, "grade": "优秀" if total >= 80 else "不合格", "selection": 40.0,
                     "parameters": 20.0, "recovery": 20.0, "efficiency": 20.0, "mechanism_bonus": 0.0,
                     "recovery_state": "untested", "recovery_untested": True, "has_recovery_mechanism": False,
                     "selection_breakdown": {"best": steps, "acceptable": 0, "wrong": 0}, "over_tooling": False,
                     "none_wrong": False, "details": {"selection": f"best={steps}, acceptable=0, wrong=0"}},
        "efficiency": {"steps": steps, "optimal_steps": None, "efficiency_ratio": None, "redundant_calls": [],
                       "redundant_call_rate": 0.0, "output_tokens": tokens, "token_method": "usage",
                       "optimal_tokens": None, "overall_score": None},
    }
    if attribution is not None:
        value["attribution"] = attribution
    return value


def attribution(case_id: str, kind: str = "premature_abandonment") -> dict[str, Any]:
    """A seed 004 failure attribution record."""
    return {"case": case_id, "failure_type": "过早放弃", "failure_kind": kind, "family": "give_up",
            "symptom": "服务报错后直接放弃", "root_cause": "没有重试或换工具", "fix": "失败后换一个工具再试",
            "clause": None, "also": [], "evidence": {"checks": ["recovery"]}, "text": f"失败 case: {case_id}"}


def case_parts(case_id: str) -> tuple[str, str]:
    """Dimension and category of a seed case id (``TT-03``: TT, TT)."""
    match = _CASE_ID.match(case_id)
    return (match["dim"], match["cat"]) if match else ("TT", "TT")


def verdict(case_id: str, result: str, checks: list[dict[str, Any]] | None = None,
            judged: list[dict[str, Any]] | None = None, failure_kind: str | None = None,
            scoring: str = "auto") -> dict[str, Any]:
    """A ``traces[].verdict`` for a case; ``failure_kind`` attributes a failure."""
    dimension, category = case_parts(case_id)
    value: dict[str, Any] = {
        "result": result,
        "case": {"id": case_id, "dimension": dimension, "category": category, "scoring": scoring},
        "dimension": dimension,
        "category": category,
        "failure_modes": [failure_kind] if failure_kind else [],
        "history_messages": 1,
        "checks": checks or [],
        "judged_checks": judged,
        "judge": "kept" if judged else "not_needed",
        "scores": scores(attribution=attribution(case_id, failure_kind) if failure_kind else None),
    }
    if judged:
        value["parts"] = {"auto": "pass", "judge": judged[0]["result"], "judge_model": "judge-test",
                          "judge_template": "tracekit-judge-v1"}
    return value


def judged_check(result: str, reasons: list[str], quotes: list[str]) -> dict[str, Any]:
    """The judge's check, with its reasons and quotes."""
    return {"check": "judge", "result": result, "evidence": "；".join(reasons),
            "judge": {"model": "judge-test", "template": "tracekit-judge-v1", "request_key": "k", "evidence_hash": "h",
                      "source": "kept", "reasons": reasons, "quotes": [{"text": q, "found_in": "final_answer"}
                                                                       for q in quotes], "status": result}}


def entry(case_id: str | None, group: str | None, repeat: int | None, result: str | None,
          **extra: Any) -> dict[str, Any]:
    """A ``traces[]`` entry of a trace that was not read from a file (no trace file)."""
    value: dict[str, Any] = {
        "trace_id": f"{case_id}-{group}-{repeat}", "session": None, "source": None, "meta": {}, "case_id": case_id,
        "run": None, "group": group, "repeat": repeat,
        "stats": {"llm_calls": 2, "tool_calls": 2, "tool_errors": 0, "input_tokens": 100, "output_tokens": 10},
        "tool_calls": [], "findings": [], "verdict": None if result is None or case_id is None else verdict(
            case_id, result), "problems": [],
    }
    value.update(extra)
    return value


def complete(results: dict[str, Any] | list[dict[str, Any]]) -> Results:
    """The results as the model, with the summary analyze computes from their traces."""
    document = {"tracekit": "0", "traces": results} if isinstance(results, list) else results
    traces = [TraceResult.model_validate(item) for item in document["traces"]]
    return Results(tracekit=str(document.get("tracekit") or "0"), traces=traces, summary=build_summary(traces))


class ParsedPage(HTMLParser):
    """Every start tag of a page with its attributes, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def ids(self) -> list[str]:
        """Every ``id`` on the page, in order."""
        return [str(attrs["id"]) for _, attrs in self.tags if attrs.get("id")]

    def links(self) -> list[str]:
        """Every link's ``href``, in order."""
        return [str(attrs["href"]) for tag, attrs in self.tags if tag == "a" and attrs.get("href")]


def parse_page(path: Path) -> ParsedPage:
    """The page at ``path``, parsed."""
    page = ParsedPage()
    page.feed(path.read_text(encoding="utf-8"))
    return page

