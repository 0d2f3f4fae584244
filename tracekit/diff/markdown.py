"""The diff as Markdown short enough for a pull-request comment: the counts, then only regressions and
improvements (each with its verdict change, calls added/removed/changed, findings that appeared and where
the critical step moved), then the other pairs whose critical step moved or changed category, each linked to
its page of the HTML diff when one was written."""

from __future__ import annotations

from collections.abc import Callable

from tracekit.diff.pairs import Diff, Pair

MAX_ROWS = 15


def render_diff_markdown(diff: Diff, link: Callable[[Pair], str | None] | None = None,
                         index: str | None = None) -> str:  # fmt: skip
    """The comment text (ends with a newline). ``link``: a pair's HTML page (as the comment should link it);
    ``index``: the HTML diff's index."""
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
        lines += [f"- {mark} {_line(pair, link(pair) if link else None)}" for pair in pairs[:MAX_ROWS]]
        if len(pairs) > MAX_ROWS:
            lines.append(f"- … and {len(pairs) - MAX_ROWS} more")
    shown = ("regression", "improvement")
    moved = [pair for pair in diff.pairs if pair.critical_step is not None and pair.change not in shown]
    if moved:
        lines += ["", f"**Critical step changed ({len(moved)}):**"]
        lines += [f"- {_line(pair, link(pair) if link else None)}" for pair in moved[:MAX_ROWS]]
        if len(moved) > MAX_ROWS:
            lines.append(f"- … and {len(moved) - MAX_ROWS} more")
    if index:
        lines += ["", f"Every pair: [the HTML diff]({_target(index)})."]
    return "\n".join(lines) + "\n"


def _line(pair: Pair, page: str | None) -> str:
    label = f"`{_code(pair.label)}`"
    if page:
        label = f"[{label}]({_target(page)})"
    ops = [row.op for row in pair.calls]
    moves = ", ".join(f"{ops.count(op)} {op}" for op in ("added", "removed", "moved", "changed") if ops.count(op))
    text = f"{label}: {pair.verdict.base} → **{pair.verdict.new}**"
    if moves:
        text += f"; calls: {moves}"
    if pair.findings_appeared:
        text += "; new findings: " + ", ".join(f"`{_code(kind)}`" for kind in pair.findings_appeared)
    critical = pair.critical_step
    if critical is not None:
        where = {side: f"step {getattr(critical.step, side)} ({getattr(critical.category, side)})"
                 if getattr(critical.step, side) is not None else "none" for side in ("base", "new")}  # fmt: skip
        text += f"; critical step {critical.change.replace('_', ' ')}: {where['base']} → {where['new']}"
    return text


def _code(text: str) -> str:
    """Text for an inline code span: one line, no backtick that could end it (Markdown escapes are literal there)."""
    return " ".join(str(text).split()).replace("`", "'")[:120]


def _target(path: str) -> str:
    """A link target: spaces and parentheses escaped so the link holds."""
    return path.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
