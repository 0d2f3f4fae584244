"""Analyzing trace files into the analyze JSON (``tracekit.results.Results``): the one door every verdict goes through.

``tracekit analyze``, ``tracekit run``'s summary and the pytest plugin all call ``iter_outcomes`` /
``write_results`` / ``build_results`` with the same ``AnalyzeSettings``, so the same traces get the same
verdicts whichever way they are analyzed.

Traces are analyzed one at a time and each entry is written out as soon as it is ready, so memory stays
flat in the number of traces; with ``jobs`` > 1 a process pool analyzes files in parallel and the entries
still come out in input order. Another ``Engine`` (``engine_ray.RayEngine``: ``--engine ray``) maps the same
``analyze_file`` over partitions elsewhere and hands back each partition's outcomes, in input order, with its
``Summary``; the partial summaries are merged, so the document is byte for byte the local engine's. A file
that cannot be analyzed (unreadable, not a trace, a crash in one of its records) is reported in its
``FileOutcome`` with its name and never stops the others.

The judge's own kept exchanges (trace files whose header says ``source: "judge"``, e.g. under
``recordings/judge/``) are not agent sessions: found in a folder they are left out of ``traces[]`` and
counted as ``summary.skipped_judge_exchanges``; a judge file named on its own is analyzed like any trace.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable, Iterator, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

import orjson

from tracekit import __version__
from tracekit.analyze import feed
from tracekit.analyze.entry import AnalyzeSettings, analyze_trace, run_name
from tracekit.analyze.reading import load_for_analysis
from tracekit.analyze.sources import trace_paths
from tracekit.analyze.summary import OTHER_ROUTES, Digest, Summary, digest
from tracekit.constants import JUDGE_SOURCE
from tracekit.errors import TracekitError
from tracekit.redact import default_redactor

if TYPE_CHECKING:
    from tracekit.results.model import Results, TraceResult
    from tracekit.results.summary import ResultsSummary

# The results models are imported inside the functions that use them (validating an entry, the document in
# memory): a run without --cases never loads them (see ``entry``).

__all__ = [
    "JUDGE_SOURCE",
    "AnalyzeSettings",
    "FileOutcome",
    "RunOutcome",
    "analyze_file",
    "analyze_trace",
    "build_results",
    "iter_outcomes",
    "run_name",
    "trace_paths",
    "write_results",
]


@dataclass
class FileOutcome:
    """One analyzed file: its entry (redacted JSON bytes), summary digest and problems; or why it could not be
    analyzed."""

    path: str | Path
    entry: bytes | None = None
    small: Digest | None = None
    result: TraceResult | None = None
    """The entry as a model (with ``AnalyzeSettings.keep_results``)."""
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    """Why the file could not be analyzed, starting with its name."""
    skipped: str | None = None
    """Why the file was left out of ``traces[]`` (a kept judge exchange), when it was."""


@dataclass
class RunOutcome:
    """What a whole run produced: the summary (the exit status depends on its verdicts and unreadable files)
    and every problem."""

    summary: ResultsSummary
    problems: list[str] = field(default_factory=list)
    """Every problem, as listed in the JSON."""
    traces: list[TraceResult] | None = None
    """Every entry as a model (with ``AnalyzeSettings.keep_results``)."""

    @property
    def results(self) -> dict[str, int]:
        """Verdict counts by result."""
        return {result: self.summary.verdicts.count(result) for result in ("pass", "acceptable", "fail", "pending")}

    @property
    def unreadable_files(self) -> int:
        """Files that could not be analyzed at all."""
        return self.summary.unreadable_files

    def document(self) -> Results:
        """The whole results document in memory (needs ``keep_results``)."""
        if self.traces is None:
            raise ValueError("the entries were not kept: analyze with AnalyzeSettings(keep_results=True)")
        # Lazy: the pydantic results models (see the note at the imports); they do not import this module.
        from tracekit.results.model import Results

        return Results(tracekit=__version__, traces=self.traces, problems=self.problems, summary=self.summary)


class Engine(Protocol):
    """Runs ``task`` (``analyze_file`` with the settings bound) over ``files`` somewhere else, in partitions.

    One method: yield, in input order, each partition's outcomes and the ``Summary`` counted from them
    (``Summary.add_outcome``) where they were analyzed. ``files`` may be a stream (a listing being read):
    take it in bounded windows. Example (a serial engine, for illustration)::

        class Serial:
            def partitions(self, files, task):
                for window in feed.windows(files, 100):
                    outcomes, counted = [task(path) for path in window], Summary()
                    any(counted.add_outcome(outcome) for outcome in outcomes)
                    yield outcomes, counted

        write_results(files, out, settings, engine=Serial())
    """

    def partitions(
        self, files: Iterable[str], task: Callable[[str], FileOutcome]
    ) -> Iterator[tuple[list[FileOutcome], Summary]]: ...


def analyze_file(path: str | Path, settings: AnalyzeSettings) -> FileOutcome:
    """Load and analyze one trace file. A file that cannot be analyzed is reported in the outcome, never
    raised: an unreadable or malformed file, one that is not a trace, a record that breaks the analysis (too
    deeply nested, a wrong type). A kept judge exchange found in a folder is skipped (``FileOutcome.skipped``)."""
    try:
        trace = load_for_analysis(path, settings)
    except TracekitError as exc:
        return FileOutcome(path, error=_named(path, str(exc)))
    except OSError as exc:
        return FileOutcome(path, error=f"{path}: cannot read ({exc.strerror or exc})")
    except Exception as exc:  # a reader bug must not stop the other files: say which file and what
        return FileOutcome(path, error=f"{path}: cannot be read as a trace ({_describe(exc)})")
    named = os.fspath(path) in settings.named_files
    if trace.header.source == JUDGE_SOURCE and not named:
        return FileOutcome(path, skipped="judge exchange")
    if not named and _only_other_routes(trace.records):
        return FileOutcome(path, skipped=OTHER_ROUTES)
    try:
        result = analyze_trace(trace, settings)
        data, small = result.to_json_bytes(), digest(result)
        # Redacted here, in the worker, so that the cost is shared out under --jobs.
        data = default_redactor().redact_bytes(data)
    except TracekitError as exc:
        return FileOutcome(path, error=_named(path, str(exc)))
    except Exception as exc:  # one malformed trace never stops the folder: report it with its name
        return FileOutcome(path, error=f"{path}: cannot be analyzed ({_describe(exc)}); the other files were")
    return FileOutcome(path, data, small, result if settings.keep_results else None, result.problems)


def iter_outcomes(files: Iterable[str | Path], settings: AnalyzeSettings, jobs: int = 1) -> Iterator[FileOutcome]:
    """Analyze files in order, serially or with ``jobs`` worker processes (results still in order). A
    stream of names (not a list) is taken as it comes, at most ``feed.STREAM_WINDOW`` chunks at a time."""
    count = len(files) if isinstance(files, Sized) else None
    if jobs <= 1 or (count is not None and count <= 1):
        for path in files:
            yield analyze_file(path, settings)
        return
    import multiprocessing

    chunksize = max(1, min(64, count // (jobs * 8))) if count is not None else feed.STREAM_CHUNK
    pool = multiprocessing.get_context(_start_method()).Pool(jobs, _init_worker, (settings,))
    try:
        window = chunksize * jobs * feed.STREAM_WINDOW
        yield from (pool.imap(_worker, files, chunksize) if count is not None
                    else feed.bounded_imap(pool, _worker, files, chunksize, window))  # fmt: skip
        pool.close()  # not terminate(): a worker killed holding the task queue's lock blocks the others
    except BaseException:  # an error, or the consumer stopped early
        pool.terminate()
        raise
    finally:
        pool.join()


def write_results(
    files: Iterable[str | Path],
    out: IO[bytes] | None,
    settings: AnalyzeSettings | None = None,
    *,
    jobs: int = 1,
    on_outcome: Callable[[FileOutcome], None] | None = None,
    engine: Engine | None = None,
) -> RunOutcome:
    """Analyze ``files`` and stream the results document to ``out`` (when given), through the redactor.

    ``files`` may be a stream (``sources.iter_trace_paths``): each is analyzed as it comes, in order. Give
    the files as strings for a large corpus: a ``Path`` object costs several times its string. With
    ``settings.keep_results`` the outcome also holds every entry, for reports made in the same process.
    ``engine``: analyze elsewhere (``Engine``); None: here, with ``jobs`` processes."""
    settings = settings or AnalyzeSettings()
    redact = default_redactor().redact_bytes
    summary = Summary()
    problems = list(settings.library.left_out) if settings.library is not None else []
    kept: list[TraceResult] | None = [] if settings.keep_results else None
    first = True
    if out is not None:
        out.write(redact(b'{"tracekit":' + orjson.dumps(__version__) + b',"traces":['))
    for outcome in _outcomes(files, settings, jobs, engine, summary):
        if on_outcome is not None:
            on_outcome(outcome)
        if outcome.error is not None:
            problems.append(outcome.error)
            continue
        if outcome.skipped is not None:
            continue
        assert outcome.small is not None and outcome.entry is not None
        problems.extend(outcome.problems)
        if kept is not None and outcome.result is not None:
            kept.append(outcome.result)
        if out is not None:
            out.write((b"\n" if first else b",\n") + outcome.entry)
            first = False
    built = summary.build()
    if out is not None:
        tail = b'\n],"problems":' + orjson.dumps(problems) + b',"summary":'
        out.write(redact(tail + built.to_json_bytes(indent=True) + b"}\n"))
    return RunOutcome(built, problems, kept)


def _outcomes(
    files: Iterable[str | Path], settings: AnalyzeSettings, jobs: int, engine: Engine | None, summary: Summary
) -> Iterator[FileOutcome]:
    """Every file's outcome in input order, counted into ``summary`` (here, or merged from the engine's
    partitions)."""
    if engine is None:
        for outcome in iter_outcomes(files, settings, jobs):
            summary.add_outcome(outcome)
            yield outcome
        return
    from functools import partial

    task = partial(analyze_file, settings=settings)
    for outcomes, counted in engine.partitions((os.fspath(path) for path in files), task):
        summary.merge(counted)
        yield from outcomes


def build_results(files: Iterable[str | Path], settings: AnalyzeSettings | None = None, *, jobs: int = 1) -> Results:
    """The whole results document in memory (for small runs, reports and tests; the CLI streams instead)."""
    from dataclasses import replace

    settings = replace(settings or AnalyzeSettings(), keep_results=True)
    return write_results(list(files), None, settings, jobs=jobs).document()


def _only_other_routes(records: list[Any]) -> bool:
    """Whether a trace holds nothing but ``http_exchange`` records (a header aside): the proxy's other routes."""
    if records and records[0].kind not in ("http_exchange", "header"):
        return False  # (most traces: the set below cannot be only http_exchange)
    return {record.kind for record in records} - {"header"} == {"http_exchange"}


def _named(path: str | Path, message: str) -> str:
    """An error message that starts with the file's name (readers usually name it already)."""
    text = os.fspath(path)
    return message if message.startswith(text) or text in message else f"{text}: {message}"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "a value is nested too deeply to analyze"
    return f"{type(exc).__name__}: {exc}"


_WORKER_SETTINGS: AnalyzeSettings | None = None


def _init_worker(settings: AnalyzeSettings) -> None:
    """Each worker process's context, given once when it starts: the settings, the case library with them."""
    global _WORKER_SETTINGS
    # A forked worker inherits the parent's SIGTERM handler (Ray's, a server's); terminate() needs the default.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _WORKER_SETTINGS = settings


def _worker(path: str | Path) -> FileOutcome:
    assert _WORKER_SETTINGS is not None
    return analyze_file(path, _WORKER_SETTINGS)


def _start_method() -> str:
    # fork shares the already imported modules (fast start); elsewhere spawn is the safe default.
    return "fork" if os.name == "posix" and hasattr(os, "fork") and os.uname().sysname == "Linux" else "spawn"
