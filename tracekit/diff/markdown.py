"""The diff as Markdown short enough for a pull-request comment: the counts, then only regressions and
improvements (each with its verdict change, calls added/removed/changed and findings that appeared)."""

from __future__ import annotations

from tracekit.diff.pairs import Diff, Pair

MAX_ROWS = 15


def render_diff_markdown(diff: Diff) -> str:
    """The comment text (ends with a newline)."""
    counts = diff.counts
    lines = [
        "### tracekit diff",
        "",
        " · ".join(f"{name} **{counts.get(name, 0)}**" for name in
                   ("regression", "improvement", "flaky", "added", "removed", "unchanged")),
    ]
    for change, mark in (("regression", "▼"), ("improvement", "▲")):
        pairs = [pair for pair in diff.pairs if pair.change == change]
        if not pairs:
            continue
        lines += ["", f"**{change.capitalize()}s ({len(pairs)}):**"]
        lines += [f"- {mark} {_line(pair)}" for pair in pairs[:MAX_ROWS]]
        if len(pairs) > MAX_ROWS:
            lines.append(f"- … and {len(pairs) - MAX_ROWS} more")
    return "\n".join(lines) + "\n"


def _line(pair: Pair) -> str:
    key = pair.key
    label = key.case_id + (f" {key.group}" if key.group else "") + ("" if key.repeat is None else f"#{key.repeat}")
    ops = [row.op for row in pair.calls]
    moves = ", ".join(f"{ops.count(op)} {op}" for op in ("added", "removed", "moved", "changed") if ops.count(op))
    text = f"`{_code(label)}`: {pair.verdict.base} → **{pair.verdict.new}**"
    if moves:
        text += f"; calls: {moves}"
    if pair.findings_appeared:
        text += "; new findings: " + ", ".join(f"`{_code(kind)}`" for kind in pair.findings_appeared)
    return text


def _code(text: str) -> str:
    """Text for an inline code span: one line, no backtick that could end it (Markdown escapes are literal there)."""
    return " ".join(str(text).split()).replace("`", "'")[:120]
