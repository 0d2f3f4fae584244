"""A pytest plugin: every case of a case library is a test item, judged offline from the recordings
bound to it, with the verdict as the outcome::

    pytest --tracekit-cases cases --tracekit-recordings recordings [--tracekit-fail-on acceptable]

- pass (and acceptable, unless ``--tracekit-fail-on acceptable``) -> passed;
- fail -> failed, with the failed checks, their evidence and the trace file in the report;
- pending (the case needs the judge and no verdict is cached) -> skipped, saying so;
- no recording bound to the case -> skipped, saying so.

A case with several recordings (groups × repeats) fails when any of them fails. The recordings are
analyzed once per session through the same door as ``tracekit analyze --cases`` (``tracekit.analyze.results``,
with the kept judge verdicts found the same way: the nearest ``judge/`` folder in or above the recordings),
so a case gets the verdict analyze gives it; nothing calls a model. Items are named
``<case file>::<case id>``, so ``-k B2-PC`` selects cases as usual.

Registered through the ``pytest11`` entry point ``tracekit``; without ``--tracekit-cases`` it adds
nothing, so it costs nothing to other test runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tracekit.errors import CaseVerdictFailed, TracekitError

# pytest loads this plugin in every test session of an environment where tracekit is installed: the tracekit
# modules it needs are imported inside the hooks, on purpose, only once --tracekit-cases is given, so that
# other test runs do not pay for importing the analysis.

if TYPE_CHECKING:
    from tracekit.cases.loader import CaseSet
    from tracekit.cases.model import Case
    from tracekit.report.runs import Run


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tracekit", "tracekit: cases as tests, judged offline from recordings")
    group.addoption("--tracekit-cases", metavar="DIR", help="Case library: each case becomes a test item.")
    group.addoption("--tracekit-recordings", metavar="DIR", help="Trace files to judge the cases by (recursive).")
    group.addoption(
        "--tracekit-fail-on",
        choices=("fail", "acceptable"),
        default="fail",
        help="Verdict that fails a test: fail (default) or acceptable (acceptable and fail).",
    )


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselection, so case items can be selected too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    cases_dir = config.getoption("tracekit_cases")
    if not cases_dir:
        return
    recordings = config.getoption("tracekit_recordings")
    # Lazy: the case models and PyYAML load only in a session given --tracekit-cases (the plugin loads in every
    # pytest run). The loader does not import the plugin: no cycle.
    from tracekit.cases.loader import load_cases

    try:
        library = load_cases(cases_dir)
    except TracekitError as exc:
        raise pytest.UsageError(f"--tracekit-cases {cases_dir}: {exc}") from exc
    recorded = RecordedVerdicts(library.case_set(), Path(recordings))
    fail_on = config.getoption("tracekit_fail_on")
    files: dict[Path, CaseFile] = {}
    for entry in sorted(library.entries, key=lambda e: e.case.id):
        parent = files.get(entry.path)
        if parent is None:
            nodeid = os.path.relpath(entry.path.resolve(), config.rootpath).replace(os.sep, "/")
            parent = files[entry.path] = CaseFile.from_parent(session, path=entry.path, nodeid=nodeid)
        line = entry.document.line_of(("id",))[0]
        items.append(CaseItem.from_parent(parent, name=entry.case.id, case=entry.case, recorded=recorded,
                                          fail_on=fail_on, line=(line or 1) - 1))


class RecordedVerdicts:
    """The analysis of every recording against the case library, done once, on first use."""

    def __init__(self, library: CaseSet, recordings: Path) -> None:
        self.library = library
        """The case library the items were collected from, loaded once: the analysis binds against it."""
        self.recordings = recordings
        self.problems: list[str] = []
        """Files that could not be analyzed and unreadable lines, as the analyze JSON lists them."""
        self._runs: dict[str, list[Run]] | None = None

    def runs_of(self, case_id: str) -> list[Run]:
        """The analyzed recordings bound to a case (empty when none)."""
        if self._runs is None:
            self._runs = self._analyze()
        return self._runs.get(case_id, [])

    def _analyze(self) -> dict[str, list[Run]]:
        # Lazy: analysis (the detectors, the results models, pydantic) and the report's ordering load when a test
        # first asks for runs, not in every pytest run. None of them imports the plugin: no cycle.
        from tracekit.analyze.results import build_results
        from tracekit.application import Analysis
        from tracekit.report.run_order import runs_from_results, sort_runs

        try:
            analysis = Analysis.build([self.recordings], library=self.library)
        except TracekitError as exc:
            raise pytest.UsageError(f"--tracekit-recordings {self.recordings}: {exc}") from exc
        results = build_results(analysis.files, analysis.settings)
        self.problems = results.problems
        by_case: dict[str, list[Run]] = {}
        for run in sort_runs(runs_from_results(results)):
            if run.case_id is not None:
                by_case.setdefault(run.case_id, []).append(run)
        return by_case


class CaseFile(pytest.File):
    """A case file; its items are added by the plugin (one per case), not collected from it."""

    def collect(self) -> Iterator[pytest.Item]:
        return iter(())


class CaseItem(pytest.Item):
    """One case, judged by the verdicts of the recordings bound to it."""

    def __init__(self, *, case: Case, recorded: RecordedVerdicts, fail_on: str, line: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.line = line
        """0-based line of the case's ``id`` in its file (where failures and skips are reported)."""
        self.recorded = recorded
        self.failing = ("fail", "acceptable") if fail_on == "acceptable" else ("fail",)
        self.add_marker(pytest.mark.tracekit_case)

    def runtest(self) -> None:
        runs = self.recorded.runs_of(self.case.id)
        if not runs:
            unreadable = self.recorded.problems
            more = f" ({len(unreadable)} problems reading them, first: {unreadable[0]})" if unreadable else ""
            _skip(f"no recording bound to {self.case.id} in {self.recorded.recordings}{more}")
        verdicts = ", ".join(f"{run.variant.strip() or run.trace_id}: {run.result}" for run in runs)
        self.user_properties.append(("tracekit_verdicts", verdicts))
        self.add_report_section("call", "tracekit", "\n".join(_describe(run) for run in runs))
        failing = [run for run in runs if run.result in self.failing]
        if failing:
            raise CaseVerdictFailed("\n".join(_describe(run, details=True) for run in failing))
        if all(run.result in (None, "pending") for run in runs):
            _skip(f"{self.case.id}: verdict pending (the case needs the judge and no verdict is cached)")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseVerdictFailed):
            return f"{self.case.id} {self.case.title}\n{excinfo.value}"
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, self.line, f"tracekit case {self.case.id}"


def _skip(reason: str) -> None:
    """Skip, reported at the case file rather than at this module."""
    raise pytest.skip.Exception(reason, _use_item_location=True)


def _describe(run: Run, details: bool = False) -> str:
    line = f"{run.label}: {run.result or 'no verdict'}"
    if not details:
        return line
    lines = [line]
    for check in run.checks:
        if check.result in ("fail", "acceptable"):
            lines.append(f"  [{check.result}] {check.name}: {check.evidence}".rstrip(": "))
    if run.attribution is not None and run.attribution.text:
        lines.extend("  " + text for text in run.attribution.text.splitlines())
    if run.source:
        lines.append(f"  trace: {run.source}")
    return "\n".join(lines)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tracekit_case: a case of the tracekit case library, judged from recordings")
    if not config.getoption("tracekit_cases"):
        return
    recordings = config.getoption("tracekit_recordings")
    if not recordings:
        raise pytest.UsageError("--tracekit-cases needs --tracekit-recordings DIR (the traces to judge the cases by)")
    if not Path(recordings).is_dir():
        raise pytest.UsageError(f"--tracekit-recordings {recordings}: no such folder")
