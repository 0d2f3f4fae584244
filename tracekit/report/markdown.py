"""The Markdown summary: short enough for a pull-request comment (at most ``MAX_LINES`` lines).

Order: the headline counts, the runs (when the results hold several: one model or policy each),
regressions against the baseline, the A/B comparison, the verdicts by dimension, pass^k, the failing
traces, the findings. Lists are cut with "… and N more" so the comment
stays short however large the run. Text from traces (check names, kinds) is escaped so it cannot
add Markdown or HTML to the comment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tracekit.report.compare import BaselineDiff, GroupComparison
from tracekit.report.runs import RESULTS, Run
from tracekit.report.summary import PassK, findings_by_kind, overall_tally, tally_by_dimension, tally_by_run
from tracekit.results.summary import ResultsSummary

MAX_LINES = 60
_ICONS = {"pass": "✅", "acceptable": "🟡", "fail": "❌", "pending": "⏳"}


def render_markdown(
    runs: Sequence[Run],
    summary: ResultsSummary | None,
    *,
    comparison: GroupComparison | None = None,
    baseline: BaselineDiff | None = None,
    pass_k: Sequence[PassK] = (),
    html_index: str | None = None,
    fail_on: str = "fail",
) -> str:
    """The summary as Markdown (ends with a newline, never longer than ``MAX_LINES`` lines): counts and
    statistics from the results' ``summary``, traces from ``runs``."""
    overall = overall_tally(summary)
    unbound = sum(1 for run in runs if run.case_id is None)
    lines = [f"### tracekit: {len(runs):,} traces, {overall.total:,} verdicts", ""]
    counts = " · ".join(f"{_ICONS[r]} {r} **{overall.counts[r]:,}**" for r in RESULTS)
    rate = "—" if overall.pass_rate is None else f"{100 * overall.pass_rate:.0f}%"
    lines.append(f"{counts} · pass rate {rate}" + (f" · {unbound:,} traces bound to no case" if unbound else ""))

    run_rows = tally_by_run(summary, pass_k, comparison)
    if run_rows:
        header = "| run | " + " | ".join(RESULTS) + " | pass rate | pass^1 |"
        lines += ["", header, "|---|" + "---:|" * (len(RESULTS) + 2)]
        for run_row in run_rows[:6]:
            counts_text = " | ".join(str(run_row.tally.counts[r]) for r in RESULTS)
            lines.append(f"| {_code(run_row.name, 60)} | {counts_text} | {_pct(run_row.tally.pass_rate)} | "
                         f"{_pct(run_row.pass_k.get(1))} |")
        if len(run_rows) > 6:
            lines.append(f"| … {len(run_rows) - 6} more runs |" + " |" * (len(RESULTS) + 2))

    if baseline is not None:
        lines += ["", f"**Against the baseline:** {len(baseline.regressions)} regressions, "
                      f"{len(baseline.improvements)} improvements, {len(baseline.flaky)} flaky, "
                      f"{len(baseline.new)} new, "
                      f"{len(baseline.missing)} missing"]
        lines += _cut([f"- ▼ {_code(c.run.label)}: {c.before.result} → **{c.run.result}**"
                       for c in baseline.regressions], 8)
        lines += _cut([f"- ▲ {_code(c.run.label)}: {c.before.result} → {c.run.result}"
                       for c in baseline.improvements], 4)

    if comparison is not None:
        a, b, overall_delta = comparison.a_name, comparison.b_name, comparison.overall
        better = sum(1 for change in comparison.changed if change.better)
        delta = overall_delta.pass_rate_delta
        lines += ["", f"**Group {_esc(a)} → {_esc(b)}** on {comparison.shared_cases} shared cases"
                      + (" (paired within each run)" if comparison.runs else "") + ": pass rate (pass only) "
                      f"{_pct(overall_delta.a.tally.pass_rate)} → {_pct(overall_delta.b.tally.pass_rate)}"
                      f" ({'—' if delta is None else f'{delta:+.0f} pp'}); "
                      f"{len(comparison.changed)} cases changed ({better} better, "
                      f"{len(comparison.changed) - better} worse)"]
        lines += _cut([f"- {'▲' if c.better else '▼'} {_code(c.label)}: {_icons(c.a_runs)} → {_icons(c.b_runs)}"
                       for c in comparison.changed], 6)

    dimensions = tally_by_dimension(summary)
    if dimensions:
        lines += ["", "| dimension | " + " | ".join(RESULTS) + " | pass rate |",
                  "|---|" + "---:|" * (len(RESULTS) + 1)]
        for row in dimensions[:8]:
            tally = row.tally
            lines.append(f"| {_esc(tally.label)} | " + " | ".join(str(tally.counts[r]) for r in RESULTS)
                         + f" | {_pct(tally.pass_rate)} |")

    if len(pass_k) > 1:
        lines += ["", "**pass^k:** " + " · ".join(f"k={row.k} {_pct(row.overall)}" for row in pass_k[:6])]
        for name in list(pass_k[0].by_run)[:6]:
            values = " · ".join(f"k={row.k} {_pct(row.by_run[name])}" for row in pass_k[:6])
            lines.append(f"- {_code(name, 60)}: {values}")

    failing_results = ("fail", "acceptable") if fail_on == "acceptable" else ("fail",)
    failing = [run for run in runs if run.result in failing_results]
    if failing:
        lines += ["", f"**Failing ({len(failing)}):**"]
        lines += _cut([f"- {_code(run.label)} {run.result}" + _failed_checks(run) for run in failing], 10)

    kinds = findings_by_kind(runs)
    if kinds:
        lines += ["", "**Findings:** " + " · ".join(f"{_code(group.kind)} {group.count}" for group in kinds[:8])
                  + (f" · … {len(kinds) - 8} more kinds" if len(kinds) > 8 else "")]
    acted = [(run, event) for run in runs if run.key.guarded for event in run.entry.guard if event.action != "record"]
    if acted:  # what the live guard (record --guard) did while the sessions ran
        lines += ["", f"**Guard ({len(acted)}):**"]
        lines += _cut([f"- {_code(run.label)} {event.action} {_code(event.rule)}: {_esc(event.message)}"
                       for run, event in acted], 10)  # fmt: skip
    if html_index:
        lines += ["", f"Full report: {_code(html_index)}"]
    if len(lines) > MAX_LINES:
        lines = [*lines[: MAX_LINES - 1], "… (cut to fit a comment; see the HTML report)"]
    return "\n".join(lines) + "\n"


def _failed_checks(run: Run) -> str:
    names = [check.name for check in run.failed_checks[:3]]
    if not names:
        return ""
    more = len(run.failed_checks) - len(names)
    return ": " + ", ".join(_code(name, 60) for name in names) + (f" (+{more})" if more > 0 else "")


def _cut(items: list[str], limit: int) -> list[str]:
    if len(items) <= limit:
        return items
    return [*items[:limit], f"- … and {len(items) - limit} more"]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _icons(runs: Sequence[Run]) -> str:
    return " ".join(_ICONS.get(run.result or "", "·") for run in runs)


_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")


def _esc(text: str) -> str:
    """Plain text in Markdown: specials backslash-escaped, one line."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))[:200]


def _code(text: str, limit: int = 120) -> str:
    """An identifier as inline code (backticks inside are replaced so the span cannot be broken)."""
    flat = " ".join(str(text).split()).replace("`", "'")
    return "`" + (flat if len(flat) <= limit else flat[: limit - 1] + "…") + "`"
