"""What the case page shows of a case definition: the seed's expectation in its own words, and the
machine checks derived from it.

Cases come from the case library the analysis used (a ``CaseSet`` or ``CaseLibrary``: ``--cases DIR``,
loaded once by the command, so the pages show the cases the verdicts were made against), or a mapping of case
ids to ``Case`` models or plain dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from tracekit.report.env import pretty_json

#: What ``write_reports(cases=...)`` accepts: a mapping of case ids, something with ``cases`` (a library), or None.
CaseSource = Mapping[str, Any] | Any | None


@dataclass
class CaseView:
    """The parts of a case the report shows, as plain text."""

    id: str
    title: str = ""
    dimension: str | None = None
    category: str | None = None
    difficulty: str | None = None
    seed: str = ""
    context: dict[str, Any] = field(default_factory=dict)
    system: str = ""
    user: str = ""
    history: str = ""
    images: list[str] = field(default_factory=list)
    intercepts: str = ""
    faults: str = ""
    expected_behaviour: list[str] = field(default_factory=list)
    criteria: dict[str, str] = field(default_factory=dict)
    expect: str = ""
    scoring: str = ""
    scoring_note: str = ""
    judge: dict[str, str] = field(default_factory=dict)
    skills: dict[str, str] = field(default_factory=dict)


def load_case_views(cases: CaseSource) -> dict[str, CaseView]:
    """Case views by id from whatever source was given (empty when none)."""
    source: Any = cases
    if source is None:
        return {}
    if hasattr(source, "cases") and not isinstance(source, Mapping):
        source = source.cases
    views = {}
    for case_id, case in dict(source).items():
        data = case.model_dump(mode="json", by_alias=True) if isinstance(case, BaseModel) else case
        if isinstance(data, Mapping):
            views[str(case_id)] = case_view(str(case_id), data)
    return views


def case_view(case_id: str, data: Mapping[str, Any]) -> CaseView:
    """A case (as a JSON-like dict in the case file's shape) as the page shows it."""
    seed = as_mapping(data.get("seed"))
    case_input = as_mapping(data.get("input"))
    judge = as_mapping(data.get("judge"))
    skills = as_mapping(data.get("skills"))
    criteria = as_mapping(data.get("criteria"))
    context = as_mapping(data.get("context"))
    return CaseView(
        id=case_id,
        title=str(data.get("title") or ""),
        dimension=_text(data.get("dimension")),
        category=_text(data.get("category")),
        difficulty=_text(data.get("difficulty")),
        seed=_seed_text(seed),
        context={key: value for key, value in context.items() if value not in (None, [], {}, "")},
        system=str(case_input.get("system") or ""),
        user=str(case_input.get("user") or ""),
        history=pretty_json(case_input["messages"]) if case_input.get("messages") else "",
        images=[
            str(image.get("path") if isinstance(image, Mapping) else image) for image in case_input.get("images") or []
        ],
        intercepts=pretty_json(data["intercepts"]) if data.get("intercepts") else "",
        faults=pretty_json(data["faults"]) if data.get("faults") else "",
        expected_behaviour=[str(line) for line in data.get("expected_behaviour") or []],
        criteria={str(k): str(v) for k, v in criteria.items() if v},
        expect=pretty_json(_without_empty(data.get("expect") or {})) if data.get("expect") else "",
        scoring=str(data.get("scoring") or ""),
        scoring_note=str(data.get("scoring_note") or ""),
        judge={str(k): str(v) for k, v in judge.items() if v},
        skills={str(name): pretty_json(_without_empty(group)) for name, group in skills.items() if group},
    )


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one (a case dict's optional objects)."""
    return value if isinstance(value, Mapping) else {}


def _seed_text(seed: Mapping[str, Any]) -> str:
    if not seed:
        return ""
    parts = [str(seed.get("file") or "")]
    if seed.get("section"):
        parts.append(f"§ {seed['section']}")
    if seed.get("number"):
        parts.append(f"#{seed['number']}")
    return " ".join(part for part in parts if part)


def _without_empty(value: Any) -> Any:
    """Drop null, empty and false-by-default fields so the expectation reads short."""
    if isinstance(value, Mapping):
        cleaned = {key: _without_empty(inner) for key, inner in value.items()}
        return {key: inner for key, inner in cleaned.items() if inner not in (None, [], {}, "")}
    if isinstance(value, list):
        return [_without_empty(inner) for inner in value]
    return value


def _text(value: Any) -> str | None:
    return None if value in (None, "") else str(value)
