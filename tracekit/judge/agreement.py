"""Agreement between the judge and human labels: raw agreement, Cohen's kappa, the confusion table.

Labels are JSON lines, one labelled trace each::

    {"trace_id": "case-01-honest", "case_id": "CASE-01", "label": "pass", "judge": "pass"}

``label`` is the human verdict (pass / acceptable / fail). The judge's verdict is the line's own ``judge``
field, or is looked up by ``trace_id`` (and ``case_id``) in results files: the JSON of ``tracekit judge
--json`` or of ``tracekit analyze --json``. Pairs whose judge verdict is pending or error are counted
apart: they are not agreements and not disagreements.

Cohen's kappa (Cohen 1960): ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e`` the
agreement expected by chance from each rater's marginal frequencies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tracekit.errors import LabelsError

GRADES: tuple[str, ...] = ("pass", "acceptable", "fail")


@dataclass(frozen=True)
class Label:
    """One human label, with the judge's verdict when known."""

    trace_id: str
    case_id: str | None
    label: str
    judge: str | None = None


@dataclass
class AgreementReport:
    """How far the judge agrees with people."""

    pairs: int
    agreements: int
    kappa: float | None
    """None when chance agreement is 1 (both raters used one grade only): kappa is undefined then."""
    confusion: dict[str, dict[str, int]]
    """``confusion[human][judge]``: counts over GRADES."""
    undecided: int = 0
    """Labels whose judge verdict is pending or error."""
    missing: list[str] = field(default_factory=list)
    """Trace ids with a label but no judge verdict at all."""
    disagreements: list[dict[str, str | None]] = field(default_factory=list)

    @property
    def agreement(self) -> float | None:
        """Observed agreement (share of pairs with the same grade)."""
        return self.agreements / self.pairs if self.pairs else None

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON."""
        return {"pairs": self.pairs, "agreement": self.agreement, "kappa": self.kappa, "confusion": self.confusion,
                "undecided": self.undecided, "missing": self.missing, "disagreements": self.disagreements}  # fmt: skip

    def render(self) -> str:
        """A plain-text summary with the confusion table (rows: people, columns: judge)."""
        agreement = f"{self.agreement:.1%}" if self.agreement is not None else "n/a"
        kappa = f"{self.kappa:.3f}" if self.kappa is not None else "undefined (one grade only)"
        lines = [f"pairs: {self.pairs}   agreement: {agreement}   Cohen's kappa: {kappa}"]
        if self.undecided or self.missing:
            lines.append(f"left out: {self.undecided} pending/error, {len(self.missing)} without a judge verdict")
        width = max(len(grade) for grade in GRADES) + 2
        lines.append("human \\ judge".ljust(14) + "".join(grade.rjust(width) for grade in GRADES))
        for human in GRADES:
            row = self.confusion[human]
            lines.append(human.ljust(14) + "".join(str(row[judge]).rjust(width) for judge in GRADES))
        return "\n".join(lines)


def cohens_kappa(pairs: Iterable[tuple[str, str]]) -> float | None:
    """Cohen's kappa of (human, judge) grade pairs; None when undefined (no pairs, or chance agreement 1)."""
    pairs = list(pairs)
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for human, judge in pairs if human == judge) / n
    humans = Counter(human for human, _ in pairs)
    judges = Counter(judge for _, judge in pairs)
    expected = sum(humans[grade] * judges[grade] for grade in set(humans) | set(judges)) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def compare(labels: list[Label], verdicts: dict[tuple[str, str | None], str] | None = None) -> AgreementReport:
    """Compare labels with judge verdicts (the label's own ``judge``, else ``verdicts[(trace_id, case_id)]``,
    else ``verdicts[(trace_id, None)]``)."""
    verdicts = verdicts or {}
    confusion = {human: dict.fromkeys(GRADES, 0) for human in GRADES}
    pairs: list[tuple[str, str]] = []
    report = AgreementReport(0, 0, None, confusion)
    for label in labels:
        judged = label.judge or verdicts.get((label.trace_id, label.case_id)) or verdicts.get((label.trace_id, None))
        if judged is None:
            report.missing.append(label.trace_id)
            continue
        if judged not in GRADES:
            report.undecided += 1
            continue
        pairs.append((label.label, judged))
        confusion[label.label][judged] += 1
        if label.label != judged:
            report.disagreements.append(
                {"trace_id": label.trace_id, "case_id": label.case_id, "human": label.label, "judge": judged}
            )
    report.pairs = len(pairs)
    report.agreements = sum(1 for human, judge in pairs if human == judge)
    report.kappa = cohens_kappa(pairs)
    return report


def load_labels(path: str | Path) -> list[Label]:
    """Read a labels JSONL file. Raises LabelsError naming the file and line of a bad entry."""
    path = Path(path)
    labels = []
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise LabelsError(f"{path}: {exc.strerror or exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise LabelsError(f"{path}:{number}: not JSON ({exc})") from exc
        if not isinstance(value, dict):
            raise LabelsError(f"{path}:{number}: expected an object")
        trace_id = value.get("trace_id")
        label = str(value.get("label", "")).strip().lower()
        if not isinstance(trace_id, str) or not trace_id:
            raise LabelsError(f"{path}:{number}: field 'trace_id' is missing")
        if label not in GRADES:
            raise LabelsError(f"{path}:{number}: field 'label' must be one of {', '.join(GRADES)}, got {label!r}")
        judge = value.get("judge")
        judge = str(judge).strip().lower() if judge is not None else None
        labels.append(Label(trace_id, value.get("case_id"), label, judge))
    return labels


def load_verdicts(paths: Iterable[str | Path]) -> dict[tuple[str, str | None], str]:
    """Judge verdicts by (trace id, case id) and by (trace id, None), from ``tracekit judge --json`` or
    ``tracekit analyze --json`` files."""
    found: dict[tuple[str, str | None], str] = {}
    for path in paths:
        try:
            document = orjson.loads(Path(path).read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise LabelsError(f"{path}: not a readable results file ({exc})") from exc
        for trace_id, case_id, check in _judged_checks(document):
            found[(trace_id, case_id)] = check["result"]
            found.setdefault((trace_id, None), check["result"])
    return found


def _judged_checks(document: Any) -> Iterable[tuple[str, str | None, dict[str, Any]]]:
    if not isinstance(document, dict):
        return
    for entry in document.get("results") or []:  # tracekit judge --json
        check = entry.get("check") if isinstance(entry, dict) else None
        if isinstance(check, dict) and "result" in check:
            yield str(entry.get("trace_id")), entry.get("case_id"), check
    for trace in document.get("traces") or []:  # tracekit analyze --json
        verdict = (trace.get("verdict") if isinstance(trace, dict) else None) or {}
        for check in [*(verdict.get("judged_checks") or []), *(verdict.get("checks") or [])]:
            if isinstance(check, dict) and check.get("check") == "judge":
                status = (check.get("judge") or {}).get("status")  # analysis may show an error as pending
                yield str(trace.get("trace_id")), trace.get("case_id"), {**check, "result": status or check["result"]}
                break
