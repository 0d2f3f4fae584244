"""The analyze JSON (DESIGN.md "Contracts"): one entry per trace, plus problems and a summary.

Traces are analyzed one at a time and each entry is written out as soon as it is ready, so memory stays
flat in the number of traces; with ``jobs`` > 1 a process pool analyzes files in parallel and the
entries still come out in input order. The document::

    {"tracekit": "<version>",
     "traces": [{"trace_id", "session", "source", "meta", "case_id", "run", "group", "repeat", "stats",
                 "tool_calls", "findings", "verdict", "problems"}, ...],
     "problems": ["file:line: what", ...],
     "summary": {...}}

The judge's own kept exchanges (trace files whose header says ``source: "judge"``, e.g. under
``recordings/judge/``) are not agent sessions: found in a folder they are left out of ``traces[]`` and
counted as ``summary.skipped_judge_exchanges``; a judge file named on its own is analyzed like any trace.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from tracekit import __version__
from tracekit.analyze.summary import Summary, digest
from tracekit.errors import TracekitError
from tracekit.trace import Trace, load_trace

if TYPE_CHECKING:
    from tracekit.analyze.verdict import JudgeHook
    from tracekit.cases.loader import CaseLibrary

_JSON_OPTIONS = orjson.OPT_NON_STR_KEYS
#: ``Header.source`` of the judge's kept exchanges (``tracekit.judge.transport.JUDGE_SOURCE``, without
#: importing the judge for every analysis).
JUDGE_SOURCE = "judge"


@dataclass(frozen=True)
class AnalyzeSettings:
    """What to analyze traces against (picklable: it travels to worker processes)."""

    cases_dir: str | None = None
    """Case library directory (``--cases``); None: no case checks."""
    case_id: str | None = None
    """Bind every trace to this case (``--case``) instead of the header's ``case_id``."""
    detector_options: dict[str, dict[str, Any]] | None = None
    """Resolved detector options ({kind: {key: value}}); None: the defaults."""
    judge: Any = None
    """A ``tracekit.judge.JudgeConfig`` for cases scored by the judge; None: their verdicts stay pending."""
    named_files: frozenset[str] = frozenset()
    """Files named one by one (not found in a folder): analyzed even when they are judge exchanges."""


@dataclass
class FileOutcome:
    """One analyzed file: its entry (redacted JSON bytes), summary digest and problems; or why it was
    unreadable."""

    path: str | Path
    entry: bytes | None = None
    small: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    skipped: str | None = None
    """Why the file was left out of ``traces[]`` (a kept judge exchange), when it was."""


@dataclass
class RunOutcome:
    """What a whole run produced: the summary, and what the exit status depends on."""

    summary: dict[str, Any]
    results: dict[str, int]
    unreadable_files: int


_DEFAULT_SETTINGS = AnalyzeSettings()
_LIBRARIES: dict[str, CaseLibrary] = {}
_OPTIONS: dict[str, dict[str, Any]] | None = None


def trace_paths(paths: Iterable[str | Path]) -> list[str]:
    """The trace files of files and folders (recursively), in the order of ``tracekit.trace.trace_files``,
    as strings: a large corpus costs a tenth of the memory of ``Path`` objects. Raises
    ``TraceFormatError`` for a path that does not exist."""
    from tracekit.errors import TraceFormatError
    from tracekit.trace.io import TRACE_SUFFIX

    found: list[str] = []
    for item in paths:
        text = os.fspath(item)
        if os.path.isdir(text):
            _walk_sorted(text, TRACE_SUFFIX, found)
        elif os.path.isfile(text):
            found.append(text)
        else:
            raise TraceFormatError(f"{Path(text)}: no such file or folder")
    return found


def _walk_sorted(folder: str, suffix: str, found: list[str]) -> None:
    """Depth first, names sorted in each folder: the component-by-component order of sorted Paths,
    without holding more than one folder's names at a time."""
    with os.scandir(folder) as entries:
        listed = sorted((entry.name, entry.is_dir(), entry.is_file()) for entry in entries)
    for name, is_dir, is_file in listed:
        path = os.path.join(folder, name)
        if is_dir:
            _walk_sorted(path, suffix, found)
        elif is_file and name.endswith(suffix):
            found.append(path)


def load_library(cases_dir: str) -> CaseLibrary:
    """The case library of a directory, loaded once per process."""
    library = _LIBRARIES.get(cases_dir)
    if library is None:
        from tracekit.cases.loader import load_cases

        library = _LIBRARIES[cases_dir] = load_cases(cases_dir)
    return library


def run_name(source: str | None, model: str | None) -> str | None:
    """The run a trace belongs to, from its header: what made it (``source``) and with which model.

    Traces of one run of a case library share it, so that (run, case, group) names a task and traces of
    the same task with different ``repeat`` are its repeats; two runs of the library (two models, or a
    reference and a flawed policy) are never mixed.

    >>> run_name("run:scripted:reference", "scripted:reference"), run_name("run:reference-agent", "claude-x")
    ('run:scripted:reference', 'run:reference-agent/claude-x')
    >>> run_name("proxy", None), run_name(None, "gpt-x"), run_name(None, None)
    ('proxy', 'gpt-x', None)
    """
    if source and model and model not in source:
        return f"{source}/{model}"
    return source or model or None


def analyze_trace(
    trace: Trace,
    settings: AnalyzeSettings | None = None,
    *,
    library: CaseLibrary | None = None,
    judge: JudgeHook | None = None,
) -> dict[str, Any]:
    """The ``traces[]`` entry of one trace: stats, calls, findings and (when bound to a case) the verdict."""
    from tracekit.analyze.binding import CaseRun, bind_case, history_length
    from tracekit.analyze.detectors import DetectorContext, Finding, run_detectors
    from tracekit.analyze.graph import trace_graph

    settings = settings or _DEFAULT_SETTINGS
    if judge is None and settings.judge is not None:
        judge = _judge_hook(settings.judge)
    if library is None and settings.cases_dir is not None:
        library = load_library(settings.cases_dir)
    header = trace.header
    problems = [str(problem) for problem in trace.problems]
    case = None
    if library is not None:
        case, problem = bind_case(trace, library.cases, settings.case_id)
        if problem is not None:
            problems.append(problem)
    history = history_length(case) if case is not None else 0
    graph = trace_graph(trace, history)
    catalog = library.catalog if library is not None else None
    context = DetectorContext(graph, trace, catalog, case, history)
    findings = run_detectors(context, settings.detector_options or _default_detector_options())
    verdict = None
    if case is not None:
        from tracekit.analyze.verdict import build_verdict

        run = CaseRun(trace, case, graph, history, catalog)
        verdict = build_verdict(run, findings, judge)
        if verdict["scores"]["tool_use"]["over_tooling"]:
            findings.append(
                Finding(
                    "over_tooling",
                    "warning",
                    [node.index for node in run.judged],
                    f"{case.id} is best answered without a tool, but the agent called "
                    f"{', '.join(node.tool for node in run.judged)} (过度工具化); answer directly.",
                )
            )
    stats = trace.stats()
    return {
        "trace_id": header.trace_id,
        "session": header.session,
        "source": str(trace.path) if trace.path is not None else None,
        "meta": header.meta,
        "case_id": case.id if case is not None else header.case_id,
        "run": run_name(header.source, header.model),
        "group": header.group,
        "repeat": header.repeat,
        "stats": {
            "llm_calls": stats.llm_calls,
            "tool_calls": stats.tool_calls,
            "tool_errors": stats.tool_errors,
            "input_tokens": stats.input_tokens,
            "output_tokens": stats.output_tokens,
        },
        "tool_calls": [
            {"index": n.index, "name": n.tool, "input": n.arguments, "is_error": n.is_error, "history": n.history}
            for n in graph.nodes
        ],
        "findings": [finding.to_dict() for finding in findings],
        "verdict": verdict,
        "problems": problems,
    }


def analyze_file(path: str | Path, settings: AnalyzeSettings) -> FileOutcome:
    """Load and analyze one trace file; an unreadable file is reported in the outcome, not raised, and a kept
    judge exchange found in a folder is skipped (``FileOutcome.skipped``)."""
    try:
        trace = load_trace(path, fast=True)
    except (TracekitError, OSError) as exc:
        return FileOutcome(path, error=str(exc) if isinstance(exc, TracekitError) else f"{path}: {exc}")
    if trace.header.source == JUDGE_SOURCE and os.fspath(path) not in settings.named_files:
        return FileOutcome(path, skipped="judge exchange")
    from tracekit.redact import default_redactor

    entry = analyze_trace(trace, settings)
    # Redacted here, in the worker, so that the cost is shared out under --jobs.
    data = default_redactor().redact_bytes(orjson.dumps(entry, option=_JSON_OPTIONS))
    return FileOutcome(path, data, digest(entry), entry["problems"])


def iter_outcomes(
    files: Sequence[str | Path], settings: AnalyzeSettings, jobs: int = 1
) -> Iterator[FileOutcome]:
    """Analyze files in order, serially or with ``jobs`` worker processes (results still in order)."""
    if jobs <= 1 or len(files) <= 1:
        for path in files:
            yield analyze_file(path, settings)
        return
    import multiprocessing

    chunksize = max(1, min(64, len(files) // (jobs * 8)))
    with multiprocessing.get_context(_start_method()).Pool(jobs, _init_worker, (settings,)) as pool:
        yield from pool.imap(_worker, files, chunksize)


def write_results(
    files: Sequence[str | Path],
    out: IO[bytes] | None,
    settings: AnalyzeSettings | None = None,
    *,
    jobs: int = 1,
    on_outcome: Callable[[FileOutcome], None] | None = None,
) -> RunOutcome:
    """Analyze ``files`` and stream the results document to ``out`` (when given), through the redactor.

    Give the files as strings for a large corpus: a ``Path`` object costs several times its string."""
    from tracekit.redact import default_redactor

    settings = settings or AnalyzeSettings()
    redact = default_redactor().redact_bytes
    summary = Summary()
    problems: list[str] = []
    first = True
    if out is not None:
        out.write(redact(b'{"tracekit":' + orjson.dumps(__version__) + b',"traces":['))
    for outcome in iter_outcomes(files, settings, jobs):
        if on_outcome is not None:
            on_outcome(outcome)
        if outcome.error is not None:
            summary.add_unreadable()
            problems.append(outcome.error)
            continue
        if outcome.skipped is not None:
            summary.add_skipped_judge_exchange()
            continue
        assert outcome.small is not None and outcome.entry is not None
        summary.add(outcome.small)
        problems.extend(outcome.problems)
        if out is not None:
            out.write((b"\n" if first else b",\n") + outcome.entry)
            first = False
    summary_dict = summary.to_dict()
    if out is not None:
        tail = b'\n],"problems":' + orjson.dumps(problems) + b',"summary":'
        out.write(redact(tail + orjson.dumps(summary_dict, option=_JSON_OPTIONS | orjson.OPT_INDENT_2) + b"}\n"))
    return RunOutcome(summary_dict, dict(summary.verdicts), summary.unreadable_files)


def build_results(
    files: Iterable[Path], settings: AnalyzeSettings | None = None, *, jobs: int = 1
) -> dict[str, Any]:
    """The whole results document in memory (for small runs and tests; the CLI streams instead)."""
    import io

    buffer = io.BytesIO()
    write_results(list(files), buffer, settings, jobs=jobs)
    document: dict[str, Any] = orjson.loads(buffer.getvalue())
    return document


def _judge_hook(config: Any) -> JudgeHook:
    """The judge's analysis hook for ``config`` (the judge keeps one CaseJudge per config and process)."""
    from tracekit.judge import judge_hook

    hook: JudgeHook = judge_hook(config)
    return hook


def _default_detector_options() -> dict[str, dict[str, Any]]:
    global _OPTIONS
    if _OPTIONS is None:
        from tracekit.analyze.detectors import resolve_options

        _OPTIONS = resolve_options()
    return _OPTIONS


_WORKER_SETTINGS: AnalyzeSettings | None = None


def _init_worker(settings: AnalyzeSettings) -> None:
    global _WORKER_SETTINGS
    _WORKER_SETTINGS = settings
    if settings.cases_dir is not None:
        load_library(settings.cases_dir)


def _worker(path: str | Path) -> FileOutcome:
    assert _WORKER_SETTINGS is not None
    return analyze_file(path, _WORKER_SETTINGS)


def _start_method() -> str:
    # fork shares the already imported modules (fast start); elsewhere spawn is the safe default.
    return "fork" if os.name == "posix" and hasattr(os, "fork") and os.uname().sysname == "Linux" else "spawn"
