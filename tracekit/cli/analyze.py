"""``tracekit analyze``: offline analysis of trace files into the results JSON (and reports)."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click

from tracekit.errors import EXIT_CHECK_FAILED, EXIT_USAGE, InputError, TracekitError
from tracekit.progress import Progress

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tracekit.analyze.judge_store import JudgeProvider
    from tracekit.analyze.results import AnalyzeSettings, Engine, FileOutcome, RunOutcome

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.

#: Show a progress bar from this many traces on (when standard error is a terminal).
PROGRESS_FROM = 20


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--cases", "cases_dir", metavar="DIR|URL",
              help="Case library (a folder or URL): bind traces, run checks.")
@click.option("--case", "case_id", help="Bind every trace to this case id (overrides the trace's case_id).")
@click.option("--json", "json_path", metavar="FILE|URL",
              help="Write the results JSON here: a path, a URL (s3://...) or '-' (stdout).")
@click.option("--html", "html_dir", type=click.Path(path_type=Path), help="Write the HTML report into this folder.")
@click.option("--markdown", "markdown_path", type=click.Path(path_type=Path), help="Write a Markdown summary here.")
@click.option("--junit", "junit_path", type=click.Path(path_type=Path), help="Write JUnit XML here.")
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(min=1),
              help="Worker processes (with --engine ray and no --ray-address: the local Ray's CPUs).")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where traces are analyzed: here, or on Ray (pip install 'tracekit[ray]'); same results.")
@click.option("--ray-address", metavar="ADDRESS",
              help="Join this Ray cluster (HOST:PORT, ray://HOST:10001, auto); default: a local Ray.")
@click.option("--parquet", "parquet_dir", metavar="DIR|URL",
              help="Also write the results as Parquet tables into this folder or URL "
              "(traces, calls, findings, checks: docs/tables.md; pip install 'tracekit[parquet]').")
@click.option(
    "--fail-on",
    type=click.Choice(["fail", "acceptable"]),
    help="Exit 1 when a verdict is fail (with 'acceptable': acceptable or fail).",
)
@click.option(
    "--detector-option",
    "detector_options",
    multiple=True,
    metavar="KIND.KEY=VALUE",
    help="Set a detector option, e.g. retry_storm.failures=5 or unused_output.enabled=false (repeatable).",
)
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="YAML file with detector options.")
@click.option(
    "--detector-preset",
    type=click.Choice(["openhands", "openhands-interactive", "roo", "gemini-cli"]),
    help="Set the loop detectors the way this peer tool decides an agent is stuck (docs/detectors.md); "
    "--config and --detector-option apply after it.",
)
@click.option(
    "--judge-store",
    type=click.Path(path_type=Path),
    help="Kept judge verdicts for cases scored by the LLM judge (default: the nearest judge/ folder in or above "
    "the PATHs, e.g. recordings/judge).",
)
@click.option(
    "--judge-model",
    help="Call this judge model for verdicts not kept yet (any model name a registered client serves). "
    "Without it, judged cases use kept verdicts only and are pending otherwise.",
)
@click.option(
    "--judge-offline",
    is_flag=True,
    help="Never call the judge, even with --judge-model (which then only picks whose kept verdicts to use); "
    "verdicts not kept stay pending.",
)
@click.option(
    "--policy",
    "policy",
    metavar="FILE|NAME",
    help="Check every trace against a domain policy (YAML, docs/diagnosis.md; shipped: tau-airline, tau-retail) "
    "and diagnose where failed traces went wrong.",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: on a terminal).")
def analyze(
    paths: tuple[str, ...],
    cases_dir: str | None,
    case_id: str | None,
    json_path: str | None,
    html_dir: Path | None,
    markdown_path: Path | None,
    junit_path: Path | None,
    jobs: int,
    engine: str,
    ray_address: str | None,
    parquet_dir: str | None,
    fail_on: str | None,
    detector_options: tuple[str, ...],
    config_path: Path | None,
    detector_preset: str | None,
    judge_store: Path | None,
    judge_model: str | None,
    judge_offline: bool,
    policy: str | None,
    progress: bool | None,
) -> None:
    """Analyze trace files (or folders of them) offline: findings, case verdicts, scores.

    Prints a summary; the full results go to --json. Exit status: 0 when it ran (whatever the verdicts),
    1 with --fail-on and a verdict at or below that level, 2 on bad usage or unreadable input (a file that
    cannot be analyzed is named on stderr; the other files are still analyzed). Unreadable lines are
    reported on stderr and in the JSON, never fatal.

    Results do not depend on the working directory: traces[].source is each file's path from the folder
    holding the PATH that found it, and traces[].trace_file is where the report reads it, relative to the
    results file. Cases scored by the LLM judge use the verdicts kept in --judge-store (offline; by default
    the nearest judge/ folder in or above the PATHs, e.g. recordings/judge); --judge-model M judges the
    others and keeps their verdicts. The judge's own kept exchanges found in a folder are skipped (counted
    in the summary).

    PATHs and --json may be URLs (s3://bucket/prefix, gs://..., any fsspec URL; credentials from the
    environment). --engine ray maps the same analysis over Ray Data and writes the same bytes.

    \b
    Examples:
      tracekit analyze recordings --cases cases --json results.json
      tracekit analyze s3://bucket/traces --engine ray --json s3://bucket/results.json
    """
    from tracekit.storage import is_url, local

    if ray_address is not None and engine != "ray":
        raise InputError("--ray-address needs --engine ray")
    to_stdout = json_path is not None and str(json_path) == "-"
    json_target = local(json_path) if json_path is not None and not to_stdout else None
    results_dir: str | Path | None = None
    if json_target is not None:
        results_dir = str(json_target).rsplit("/", 1)[0] if is_url(json_target) else Path(json_target).parent
    local_paths = [Path(local(path)) for path in paths if not is_url(path)]
    settings, files, bad_case_files = _prepare(
        paths, cases_dir, case_id, detector_options, config_path, results_dir, detector_preset=detector_preset
    )
    if policy is not None:
        settings = replace(settings, policy=_policy(policy))
    if cases_dir is not None:
        judge, note = kept_judge(local_paths, judge_store, judge_model, judge_offline)
        if note:
            click.echo(note, err=True)
        settings = replace(settings, judge=judge)
    many = not isinstance(files, list) or len(files) >= PROGRESS_FROM  # a stream: its length is unknown
    show_progress = progress if progress is not None else (many and sys.stderr.isatty())
    reports = html_dir is not None or markdown_path is not None or junit_path is not None
    if parquet_dir is not None:
        settings = replace(settings, keep_results=True)
    if reports:
        if to_stdout:
            raise InputError("--json - cannot be combined with --html/--markdown/--junit; give a file")
        settings = replace(settings, keep_results=True)
    runner = _engine(engine, ray_address, jobs)
    try:
        with contextlib.ExitStack() as stack:
            out = _open_output(stack, json_path)
            outcome = _run(stack, files, settings, 1 if runner is not None else jobs, out, show_progress, runner)
    except TracekitError as exc:  # a URL that cannot be written, a Ray cluster that cannot be reached
        raise InputError(str(exc)) from exc
    if parquet_dir is not None:
        _write_parquet(outcome, parquet_dir, settings.sources.results_dir)
    click.echo(_summary_line(outcome), err=to_stdout)
    if json_path is None and not reports:
        click.echo("Write the full results with --json FILE.", err=True)
    if reports:
        where = Path(settings.sources.results_dir) if settings.sources.results_dir else Path.cwd()
        name = str(json_path).rsplit("/", 1)[-1] if json_path is not None else "results.json"
        _write_reports(outcome, where, name, html_dir, markdown_path, junit_path, cases_dir, fail_on or "fail")
    sys.stdout.flush()
    if outcome.unreadable_files or bad_case_files:
        sys.exit(EXIT_USAGE)
    failing = {"fail"} if fail_on == "fail" else {"fail", "acceptable"} if fail_on == "acceptable" else set()
    if any(outcome.results.get(result) for result in failing):
        sys.exit(EXIT_CHECK_FAILED)


def _policy(name: str) -> str:
    """``--policy``: a file (as an absolute path, for worker processes) or a shipped policy's name, checked."""
    from tracekit.diagnose import PolicyError, load_policy

    given = Path(name)
    resolved = str(given.resolve()) if given.exists() else name
    try:
        load_policy(resolved)
    except PolicyError as exc:
        raise InputError(f"--policy: {exc}") from exc
    return resolved


def kept_judge(
    paths: tuple[Path, ...] | list[Path],
    store: Path | None = None,
    model: str | None = None,
    offline: bool = False,
) -> tuple[JudgeProvider | None, str]:
    """The judge every door of analysis uses (``tracekit analyze``, ``tracekit run``'s summary, the pytest
    plugin): kept verdicts from ``store`` or, by default, from the nearest ``judge/`` folder in or above the
    recordings (``tracekit.analyze.judge_store.find_judge_store``), calling ``model`` for the others unless
    offline. Returns the provider (None: no judge, judged cases stay pending) and a note for stderr that says
    where verdicts come from, or that there are none."""
    from functools import partial

    from tracekit.analyze.judge_store import find_judge_store

    found = store or find_judge_store(paths)
    if found is None and model is None:
        return None, ("note: no kept judge verdicts (no judge/ folder in or above "
                      f"{', '.join(map(str, paths))}): cases scored by the judge stay pending; "
                      "give --judge-store DIR or --judge-model MODEL")  # fmt: skip
    from tracekit.judge import JudgeConfig, JudgeError, judge_hook

    try:
        config = JudgeConfig(model=model, store=found or _new_store(paths), offline=offline or model is None)
    except JudgeError as exc:
        raise InputError(f"--judge-model: {exc}") from exc
    note = f"judge verdicts: kept in {config.store}"
    if model is not None and not config.offline:
        note += f", others from {model}"
    elif not config.store.is_dir():
        note = (f"note: no kept judge verdicts in {config.store} (no such folder): "
                "cases scored by the judge stay pending")
    return partial(judge_hook, config), note


def _new_store(paths: tuple[Path, ...] | list[Path]) -> Path:
    """Where a judge model's new verdicts are kept when no store exists yet: ``judge/`` in the first PATH."""
    first = Path(paths[0]) if paths else Path()
    return (first if first.is_dir() else first.parent) / "judge"


def _prepare(
    paths: tuple[str, ...],
    cases_dir: str | None,
    case_id: str | None,
    detector_options: tuple[str, ...],
    config_path: Path | None,
    results_dir: str | Path | None,
    detector_preset: str | None = None,
) -> tuple[AnalyzeSettings, list[str] | Iterator[str], int]:
    """The settings, the trace files (a list; a stream, listed as it is analyzed, when a PATH is a URL), and
    how many case files could not be loaded (each named on stderr)."""
    from tracekit.analyze.config import detector_options as resolve_detector_options
    from tracekit.analyze.results import AnalyzeSettings, load_library
    from tracekit.analyze.sources import SourceNames, iter_trace_paths, trace_paths
    from tracekit.storage import is_url, kind, local

    try:
        options = resolve_detector_options(config_path, detector_options, detector_preset)
        streamed = any(is_url(local(path)) for path in paths)
        files = iter_trace_paths(paths) if streamed else trace_paths(paths)
        bad_case_files: list[str] = []
        if cases_dir is not None:
            from tracekit.analyze.binding import library_problems  # the case library's code: with --cases only

            library = load_library(library_key(cases_dir))
            bad_case_files = library_problems(library_key(cases_dir))
            for problem in bad_case_files:
                click.echo(f"error: {problem} (left out of the library; the other cases are analyzed)", err=True)
            if case_id is not None and case_id not in library.cases:
                raise InputError(f"--case {case_id}: no such case in {cases_dir}")
        elif case_id is not None:
            raise InputError("--case needs --cases DIR (the library the case comes from)")
        named = frozenset(os.fspath(local(path)) for path in paths if kind(path) != "directory")
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    cases = library_key(cases_dir) if cases_dir is not None else None
    sources = SourceNames.of(paths, results_dir)
    return AnalyzeSettings(cases, case_id, options, named_files=named, sources=sources), files, len(bad_case_files)


def library_key(cases_dir: str) -> str:
    """How the settings name a case library: an absolute path (results do not depend on the working
    directory), or the URL as given."""
    from tracekit.storage import is_url, local

    where = local(cases_dir)
    return str(where) if is_url(where) else os.path.abspath(where)


def _open_output(stack: contextlib.ExitStack, json_path: str | None) -> IO[bytes] | None:
    """Where the JSON streams: stdout, or a temporary file renamed over ``json_path`` once it is whole."""
    if json_path is not None and str(json_path) == "-":
        return sys.stdout.buffer
    if json_path is not None:
        from tracekit.output import atomic_output

        return stack.enter_context(atomic_output(json_path))
    return None


def _run(
    stack: contextlib.ExitStack,
    files: list[str] | Iterator[str],
    settings: AnalyzeSettings,
    jobs: int,
    out: IO[bytes] | None,
    show_progress: bool,
    engine: Engine | None = None,
) -> RunOutcome:
    from tracekit.analyze.results import write_results

    bar = None
    if show_progress:
        bar = stack.enter_context(Progress(len(files) if isinstance(files, list) else None, label="Analyzing"))

    def on_outcome(outcome: FileOutcome) -> None:
        for problem in outcome.problems:
            click.echo(f"warning: {problem}", err=True)
        if outcome.error is not None:
            click.echo(f"error: {outcome.error}", err=True)
        if bar is not None:
            bar.advance(str(outcome.path), ok=outcome.error is None)

    return write_results(files, out, settings, jobs=jobs, on_outcome=on_outcome, engine=engine)


def _engine(name: str, address: str | None, jobs: int) -> Engine | None:
    """The engine of --engine (None: this process and its --jobs pool)."""
    if name != "ray":
        return None
    from tracekit.analyze.engine_ray import RayEngine

    return RayEngine(address, num_cpus=jobs if jobs > 1 else None)


def _write_parquet(outcome: RunOutcome, out_dir: str, results_dir: str | Path | None) -> None:
    """The results as Parquet tables (``tracekit.tables``); ``traces[].trace_file`` is relative to
    ``results_dir`` (the --json file's folder; else the working directory, as the entries say)."""
    from tracekit.tables import write_tables

    try:
        written = write_tables(outcome.document(), out_dir, base=results_dir)
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    click.echo(f"wrote {', '.join(written)} tables into {out_dir}", err=True)


def _summary_line(outcome: RunOutcome) -> str:
    summary = outcome.summary
    line = (
        f"{summary.traces} traces, {summary.tool_calls} tool calls, {summary.tool_errors} tool errors, "
        f"{sum(summary.findings.values())} findings"
    )
    if summary.bound_to_case:
        counts = ", ".join(f"{outcome.results[name]} {name}" for name in ("pass", "acceptable", "fail", "pending")
                           if outcome.results.get(name))  # fmt: skip
        line += f"; verdicts: {counts}"
    if summary.unreadable_files:
        line += f"; {summary.unreadable_files} unreadable files"
    if summary.skipped_judge_exchanges:
        line += f"; {summary.skipped_judge_exchanges} judge exchanges skipped"
    return line


def _write_reports(
    outcome: RunOutcome,
    results_dir: Path,
    results_name: str,
    html_dir: Path | None,
    markdown_path: Path | None,
    junit_path: Path | None,
    cases_dir: str | None,
    fail_on: str,
) -> None:
    """The reports, from the results in memory (no results file needed; ``trace_file`` is relative to
    ``results_dir``)."""
    from tracekit.analyze.results import load_library
    from tracekit.report import write_reports

    library = load_library(library_key(cases_dir)) if cases_dir is not None else None
    written = write_reports(
        outcome.document(), html_dir, markdown_path, junit_path, cases=library, fail_on=fail_on,
        results_dir=results_dir, results_name=results_name,
    )  # fmt: skip
    for path in [written.index, written.markdown, written.junit]:
        if path is not None:
            click.echo(f"wrote {path}", err=True)
