"""Reading a judge's answer: JSON with a verdict, reasons and quotes that must occur in the evidence.

Anything else is an ``error``, never a pass: text that holds no JSON object, a verdict outside
pass / acceptable / fail, no reasons, no quotes, or a quote that does not occur in the evidence (a judge
that cites what is not there is not judging this trace). With several samples the majority decides; a tie
goes to the stricter verdict, and most samples must be usable.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from tracekit.analyze.combine import STRICTNESS
from tracekit.judge.evidence import Evidence
from tracekit.judge.prompt import FAILURE_KINDS, VERDICTS

SampleResult = Literal["pass", "acceptable", "fail", "error"]



@dataclass(frozen=True)
class Quote:
    """A quote of the judge's answer and the evidence section it was found in (None: not found)."""

    text: str
    found_in: str | None

    def to_dict(self) -> dict[str, Any]:
        """As listed in a judged check."""
        return {"text": self.text, "found_in": self.found_in}


@dataclass
class SampleVerdict:
    """One judge answer, read: its verdict (or ``error`` with the reason), reasons and quotes."""

    result: SampleResult
    reasons: list[str] = field(default_factory=list)
    quotes: list[Quote] = field(default_factory=list)
    error: str | None = None
    text: str = ""
    """The judge's answer text as received."""
    failure_kind: str | None = None
    """With a fail verdict: the failure type the judge named (``FAILURE_KINDS``), if any."""

    def to_dict(self) -> dict[str, Any]:
        """As listed in a judged check's ``samples``."""
        value: dict[str, Any] = {"result": self.result, "reasons": self.reasons,
                                 "quotes": [quote.to_dict() for quote in self.quotes]}
        if self.failure_kind is not None:
            value["failure_kind"] = self.failure_kind
        if self.error is not None:
            value["error"] = self.error
            value["text"] = self.text
        return value


def response_text(response: dict[str, Any]) -> str:
    """The text blocks of an Anthropic Messages response, joined."""
    content = response.get("content")
    if not isinstance(content, list):
        return ""
    return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict)
                   and block.get("type") == "text")


def parse_judge_output(text: str, evidence: Evidence) -> SampleVerdict:
    """Read one judge answer against the evidence it was given."""
    value = _json_object(text)
    if value is None:
        return SampleVerdict("error", error="the judge's answer holds no JSON object", text=text)
    verdict = value.get("verdict")
    if not isinstance(verdict, str) or verdict.strip().lower() not in VERDICTS:
        return SampleVerdict("error", error=f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}", text=text)
    reasons = _strings(value.get("reasons", value.get("reason")))
    raw_quotes = _strings(value.get("quotes"))
    quotes = [Quote(quote, evidence.locate(quote)) for quote in raw_quotes]
    result: SampleResult = verdict.strip().lower()  # type: ignore[assignment]
    if not reasons:
        return SampleVerdict("error", [], quotes, "the judge gave no reasons", text)
    if not quotes:
        return SampleVerdict("error", reasons, [], "the judge quoted no evidence", text)
    missing = [quote.text for quote in quotes if quote.found_in is None]
    if missing:
        shown = "; ".join(repr(text[:80]) for text in missing[:3])
        return SampleVerdict("error", reasons, quotes, f"quote not found in the evidence: {shown}", text)
    kind = value.get("failure_kind")
    failure_kind = kind if result == "fail" and kind in FAILURE_KINDS else None
    return SampleVerdict(result, reasons, quotes, None, text, failure_kind)


def majority(samples: list[SampleVerdict]) -> tuple[SampleResult, SampleVerdict | None, str]:
    """The verdict of several samples: ``(result, the sample that speaks for it, how it was reached)``.

    Most samples must be usable (not ``error``); otherwise the result is ``error``. Among usable samples
    the most frequent verdict wins, a tie going to the stricter one.
    """
    if not samples:
        return "error", None, "no judge answer"
    usable = [sample for sample in samples if sample.result != "error"]
    if not usable or (len(samples) > 1 and len(usable) * 2 <= len(samples)):
        first_error = next(sample for sample in samples if sample.result == "error")
        how = f"{len(samples) - len(usable)} of {len(samples)} answers unusable" if len(samples) > 1 else ""
        return "error", first_error, how or (first_error.error or "unusable answer")
    counts = Counter(sample.result for sample in usable)
    best = max(counts.items(), key=lambda item: (item[1], STRICTNESS[item[0]]))[0]
    speaker = next(sample for sample in usable if sample.result == best)
    how = "" if len(samples) == 1 else "majority of " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    if len(samples) > 1 and len(usable) < len(samples):
        how += f" ({len(samples) - len(usable)} unusable)"
    return best, speaker, how


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").strip()
        if stripped[:4].lower() == "json":
            stripped = stripped[4:]
    candidates = [stripped]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    for candidate in candidates:
        try:
            value = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [item.strip() for item in value if isinstance(item, str) and item.strip()]
