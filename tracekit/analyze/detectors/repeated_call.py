"""``repeated_call``: a call identical to an earlier call that had already returned a non-error result."""

from __future__ import annotations

from typing import Any

from tracekit.analyze.detectors.registry import DetectorContext, DetectorStream, Finding, detector, split_history
from tracekit.analyze.detectors.windows import LOOP_WINDOW_DEFAULTS, boundaries, outcome
from tracekit.analyze.graph import CallNode
from tracekit.errors import DetectorOptionError

_SAME = (False, False)  # no window options: one window, one run


@detector(
    "repeated_call",
    min_repeats=1,
    error_from=3,
    consecutive=False,
    same_outcome=False,
    require_success=True,
    restart_after_flag=False,
    ignore=[],
    **LOOP_WINDOW_DEFAULTS,
)
class RepeatedCall(DetectorStream):
    """A call whose tool and canonical arguments equal those of an earlier call that had already succeeded.

    Options: ``min_repeats`` (repeats of one call before it is flagged; 1 flags the first repeat),
    ``error_from`` (repeats from which the finding is an error rather than a warning),
    ``consecutive`` (only back-to-back repeats count: another call in between ends the run),
    ``same_outcome`` (a repeat counts only when it returned what the call it repeats returned: a poll
    whose answer changed is not redundant), ``require_success`` (the repeated call must have succeeded
    before the repeat was issued; off: any identical call counts, failed or still running),
    ``restart_after_flag`` (with ``consecutive``: once a run is flagged, counting starts again from the
    next call, as Roo Code's counter does when it blocks a call), ``ignore`` (calls this detector does not
    see: a list of ``{tool: NAME, args: {KEY: VALUE}}``, a call matching the tool and every argument given;
    they neither count nor break a back-to-back run, as Roo Code skips browser scroll actions), and the
    window options of ``windows.py``.
    """

    def __init__(self, context: DetectorContext, options: dict[str, Any]) -> None:
        super().__init__(context, options)
        self.min_repeats = int(options["min_repeats"])
        self.consecutive = bool(options.get("consecutive"))
        self.require_success = bool(options.get("require_success", True))
        self.same_outcome = bool(options.get("same_outcome"))
        self.restart_at = self.min_repeats + 1 if options.get("restart_after_flag") else 0
        self.bounds = boundaries(context, options)
        self.groups: list[tuple[CallNode, list[CallNode]]] = []
        """Every group so far, in the order the offline rule lists them."""
        self._reference: dict[str, CallNode] = {}  # anywhere: the call a repeat of each key repeats
        self._open: dict[int, tuple[CallNode, list[CallNode]]] = {}  # anywhere: this window's groups
        self._run: list[CallNode] = []  # consecutive: the current back-to-back run
        self.ignore = ignore_rules(options.get("ignore") or [])
        self.fast = not context.live and not self.consecutive and self.bounds is None and not self.ignore

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        ignore_rules(options.get("ignore") or [])

    def observe(self, node: CallNode) -> list[Finding]:
        if self.fast:  # offline, anywhere, one window: the commonest case
            if node.key in self._reference:
                self._anywhere(node)
            elif (node.has_result and not node.is_error) or not self.require_success:
                self._reference[node.key] = node  # what ``_anywhere`` does with a call it has not seen
            return []
        if self.ignore and ignored(node, self.ignore):
            return []
        new_window, new_run = self.bounds.step(node) if self.bounds is not None else _SAME
        if self.consecutive:
            if new_run:
                self._close_run()
            group = self._back_to_back(node)
        else:
            if new_window:
                self._open = {}
                self._reference = {}
            group = self._anywhere(node)
        if group is not None and self.context.live and self._flagged(group[1]):
            return [_finding(group[0], group[1], self.options)]
        return []

    def finish(self) -> list[Finding]:
        self._close_run()
        return [_finding(original, repeats, self.options) for original, repeats in self.groups
                if self._flagged(repeats)]  # fmt: skip

    def _flagged(self, repeats: list[CallNode]) -> bool:
        return len(repeats) >= self.min_repeats and any(not node.history for node in repeats)

    def _anywhere(self, node: CallNode) -> tuple[CallNode, list[CallNode]] | None:
        """Repeats of a call anywhere later in the window, grouped by the call they repeat."""
        require_success = self.require_success
        reference = self._reference
        original = reference.get(node.key)
        if original is not None and (not require_success or original.returned_before(node)):
            if self.same_outcome and outcome(node) != outcome(original):
                if node.succeeded or not require_success:
                    reference[node.key] = node  # the answer changed: later repeats are compared with this one
                return None
            group = self._open.get(original.index)
            if group is None:
                group = self._open[original.index] = (original, [node])
                self.groups.append(group)
            else:
                group[1].append(node)
            return group
        if original is None and (node.succeeded or not require_success):
            reference[node.key] = node
        return None

    def _back_to_back(self, node: CallNode) -> tuple[CallNode, list[CallNode]] | None:
        """Runs of identical calls with no other call between them: (first call, the repeats after it)."""
        current = self._run
        if current and _continues(current[0], node, self.require_success, self.same_outcome):
            current.append(node)
            group = (current[0], current[1:])
            if len(current) == self.restart_at:
                self.groups.append(group)
                self._run = []
            return group
        self._close_run()
        if node.succeeded or not self.require_success:
            self._run = [node]
        return None

    def _close_run(self) -> None:
        current = self._run
        if len(current) > 1:
            self.groups.append((current[0], current[1:]))
        self._run = []


def ignore_rules(rules: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The ``ignore`` option as (tool, arguments) pairs; raises ``DetectorOptionError`` for a malformed rule."""
    parsed = []
    for rule in rules:
        tool = rule.get("tool") if isinstance(rule, dict) else None
        args = rule.get("args", {}) if isinstance(rule, dict) else None
        if not isinstance(tool, str) or not isinstance(args, dict) or set(rule) - {"tool", "args"}:
            expected = "{tool: NAME, args: {KEY: VALUE}}"
            raise DetectorOptionError(f"repeated_call.ignore: expected {expected}, got {rule!r}")
        parsed.append((tool, args))
    return parsed


def ignored(node: CallNode, rules: list[tuple[str, dict[str, Any]]]) -> bool:
    """Whether a call matches one of the ``ignore`` rules."""
    arguments = node.arguments if isinstance(node.arguments, dict) else {}
    return any(
        node.tool == tool and all(key in arguments and arguments[key] == value for key, value in args.items())
        for tool, args in rules
    )


def _continues(first: CallNode, node: CallNode, require_success: bool, same_outcome: bool) -> bool:
    if node.key != first.key:
        return False
    if require_success and not first.returned_before(node):
        return False
    return not same_outcome or outcome(node) == outcome(first)


def _finding(original: CallNode, repeats: list[CallNode], options: dict[str, Any]) -> Finding:
    calls, history = split_history([original, *repeats])
    judged = calls if original.history else calls[1:]  # the judged repeats
    where = "in the conversation history" if original.history else f"as call #{original.index}"
    times = "once more" if len(repeats) == 1 else f"{len(repeats)} more times"
    listed = f"repeat{'s' if len(judged) > 1 else ''}: {', '.join([f'#{i}' for i in judged])}"
    same = " and got the same result" if options.get("same_outcome") else ""
    if options.get("require_success", True):
        happened = (
            f"{original.tool} was called {times} with the same arguments{same} after it had already succeeded "
            f"{where}; reuse that result instead of calling again ({listed})."
        )
    else:
        in_a_row = " in a row" if options.get("consecutive") else ""
        happened = (
            f"{original.tool} was called {len(repeats) + 1} times{in_a_row} with the same arguments{same} (first "
            f"{where}); the same call will not get a different answer, so use what it returned, change the "
            f"arguments, or try another approach ({listed})."
        )
    return Finding(
        kind="repeated_call",
        severity="error" if len(repeats) >= int(options["error_from"]) else "warning",
        calls=calls,
        context_calls=history,
        message=happened,
    )
