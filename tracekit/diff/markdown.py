"""The diff as Markdown short enough for a pull-request comment: the counts, then only regressions and
improvements (each with its verdict change, calls added/removed/changed, findings that appeared and where
the critical step moved), then the other pairs whose critical step moved or changed category, each linked to
its page of the HTML diff when one was written."""

from __future__ import annotations

from collections.abc import Callable

from tracekit.diff.pairs import Diff, Pair
from tracekit.diff.stream import Head

MAX_ROWS = 15


def render_diff_markdown(diff: Diff, link: Callable[[Pair], str | None] | None = None,
                         index: str | None = None) -> str:  # fmt: skip
    """The comment text (ends with a newline). ``link``: a pair's HTML page (as the comment should link it);
    ``index``: the HTML diff's index."""
    digest = MarkdownDigest()
    for pair in diff.pairs:
        digest.add(pair, link(pair) if link else None)
    return digest.render(diff.counts, index)


class MarkdownDigest:
    """What the comment shows, collected a pair at a time (``tracekit diff`` streams its pairs): the first
    regressions, improvements and other pairs whose critical step changed, each with its link, and how many
    of each there are."""

    def __init__(self) -> None:
        self.sections: dict[str, Head[tuple[Pair, str | None]]] = {
            name: Head(MAX_ROWS) for name in ("regression", "improvement", "moved")
        }

    def add(self, pair: Pair, page: str | None = None) -> None:
        """Count ``pair`` (``page``: its HTML page, as the comment links it)."""
        if pair.change in ("regression", "improvement"):
            self.sections[pair.change].append((pair, page))
        elif pair.critical_step is not None:
            self.sections["moved"].append((pair, page))

    def render(self, counts: dict[str, int], index: str | None = None) -> str:
        """The comment text (ends with a newline); ``index``: the HTML diff's index."""
        lines = [
            "### tracekit diff",
            "",
            " · ".join(f"{name} **{counts.get(name, 0)}**" for name in
                       ("regression", "improvement", "flaky", "added", "removed", "unchanged")),
        ]
        for change, mark in (("regression", "▼"), ("improvement", "▲")):
            pairs = self.sections[change]
            if not pairs:
                continue
            lines += ["", f"**{change.capitalize()}s ({len(pairs)}):**"]
            lines += [f"- {mark} {_line(pair, page)}" for pair, page in pairs]
            if len(pairs) > MAX_ROWS:
                lines.append(f"- … and {len(pairs) - MAX_ROWS} more")
        moved = self.sections["moved"]
        if moved:
            lines += ["", f"**Critical step changed ({len(moved)}):**"]
            lines += [f"- {_line(pair, page)}" for pair, page in moved]
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
