"""``tracekit analyze``: offline analysis of trace files into the results JSON (and reports)."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

import click

from tracekit.cli.exits import EXIT_CHECK_FAILED, EXIT_USAGE, InputError
from tracekit.errors import ExpectedActionsError, OptionsError, TracekitError
from tracekit.progress import Progress

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tracekit.analyze.results import AnalyzeSettings, Engine, FileOutcome, RunOutcome
    from tracekit.cases.loader import CaseSet

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
@click.option("--html-single", "html_single", type=click.Path(path_type=Path), metavar="FILE",
              help="Write the report as one self-contained HTML file to attach to a pull request: the summary, "
              "every trace in one table (failures first) and the failing traces' pages (docs/reports.md).")
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
    metavar="DIR|URL",
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
@click.option(
    "--diagnose-model",
    metavar="MODEL",
    help="Also ask this judge model for the critical step of each failed trace, over the trace, the violations "
    "and the ten-category taxonomy (docs/diagnosis.md); answers are kept in --judge-store, so re-analysis costs "
    "nothing; with --judge-offline, kept answers only. Its agreement with the rules is in the summary.",
)
@click.option(
    "--expected-actions",
    "expected_actions",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="The calls each trace was expected to make (YAML/JSON: trace id or case id -> [{name, arguments}], "
    "docs/diagnosis.md): the diagnosis names the first call that differs, one never made, one not expected.",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: on a terminal).")
def analyze(
    paths: tuple[str, ...],
    cases_dir: str | None,
    case_id: str | None,
    json_path: str | None,
    html_dir: Path | None,
    html_single: Path | None,
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
    judge_store: str | None,
    judge_model: str | None,
    judge_offline: bool,
    policy: str | None,
    diagnose_model: str | None,
    expected_actions: Path | None,
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
      tracekit analyze runs/today --cases cases --html-single review.html
      tracekit analyze s3://bucket/traces --engine ray --json s3://bucket/results.json
    """
    from tracekit.application import Analysis
    from tracekit.cli.paths import case_library, output_file, output_folder
    from tracekit.storage import is_url, local

    if ray_address is not None and engine != "ray":
        raise InputError("--ray-address needs --engine ray")
    for option, file in (("--json", json_path), ("--markdown", markdown_path), ("--junit", junit_path),
                         ("--html-single", html_single)):
        output_file(option, file)  # refused now, not after the analysis
    output_folder("--html", html_dir)
    output_folder("--parquet", parquet_dir)
    case_library("--cases", cases_dir)
    to_stdout = json_path is not None and str(json_path) == "-"
    json_target = local(json_path) if json_path is not None and not to_stdout else None
    results_dir: str | Path | None = None
    if json_target is not None:
        results_dir = str(json_target).rsplit("/", 1)[0] if is_url(json_target) else Path(json_target).parent
    try:
        analysis = Analysis.build(
            paths, cases_dir=cases_dir, case_id=case_id, results_dir=results_dir, detector_options=detector_options,
            config_path=config_path, detector_preset=detector_preset, judge_store=judge_store,
            judge_model=judge_model, judge_offline=judge_offline, diagnose_model=diagnose_model,
        )  # fmt: skip
    except OptionsError as exc:
        raise InputError(str(exc)) from exc
    for problem in analysis.library_problems:
        click.echo(f"error: {problem} (left out of the library; the other cases are analyzed)", err=True)
    if analysis.judge_note:
        click.echo(analysis.judge_note, err=True)
    settings, files, bad_case_files = analysis.settings, analysis.files, len(analysis.library_problems)
    if policy is not None:
        settings = replace(settings, policy=_policy(policy))
    if expected_actions is not None:
        settings = replace(settings, expected_actions=_expected_actions(expected_actions))
    many = not isinstance(files, list) or len(files) >= PROGRESS_FROM  # a stream: its length is unknown
    show_progress = progress if progress is not None else (many and sys.stderr.isatty())
    reports = any(option is not None for option in (html_dir, html_single, markdown_path, junit_path))
    if parquet_dir is not None:
        settings = replace(settings, keep_results=True)
    if reports and to_stdout:
        raise InputError("--json - cannot be combined with --html/--html-single/--markdown/--junit; give a file")
    runner = _engine(engine, ray_address, jobs)
    with contextlib.ExitStack() as reports_stack:
        # The reports read the results JSON back entry by entry, from a local copy written as it streams:
        # memory stays flat in the number of traces (no entry is kept in memory for them).
        spool = reports_stack.enter_context(_spool()) if reports else None
        try:
            with contextlib.ExitStack() as stack:
                out = _open_output(stack, json_path)
                if spool is not None:
                    out = cast("IO[bytes]", _Tee(out, stack.enter_context(open(spool, "wb"))))
                outcome = _run(stack, files, settings, 1 if runner is not None else jobs, out, show_progress, runner)
        except TracekitError as exc:  # a URL that cannot be written, a Ray cluster that cannot be reached
            raise InputError(str(exc)) from exc
        if parquet_dir is not None:
            _write_parquet(outcome, parquet_dir, settings.sources.results_dir)
        click.echo(_summary_line(outcome), err=to_stdout)
        if json_path is None and not reports:
            click.echo("Write the full results with --json FILE.", err=True)
        if spool is not None:
            where = Path(settings.sources.results_dir) if settings.sources.results_dir else Path.cwd()
            name = str(json_path).rsplit("/", 1)[-1] if json_path is not None else "results.json"
            _write_reports(spool, where, name, html_dir, html_single, markdown_path, junit_path, analysis.library,
                           fail_on or "fail")  # fmt: skip
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


def _expected_actions(path: Path) -> str:
    """``--expected-actions``: the file as an absolute path (for worker processes), checked now."""
    from tracekit.diagnose.reference import load_expected_actions  # loaded only when the option is given

    resolved = str(path.resolve())
    try:
        load_expected_actions(resolved)
    except ExpectedActionsError as exc:
        raise InputError(f"--expected-actions: {exc}") from exc
    return resolved


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
    if summary.skipped_other_routes:
        line += f"; {summary.skipped_other_routes} files of other routes only skipped"
    judge = summary.diagnosis_judge
    if judge is not None:
        line += (f"; diagnosis judge: {judge.judged} judged ({judge.same_step} same step, {judge.within_one_step} "
                 f"within one, {judge.same_category} same category), {judge.errors} errors, {judge.pending} pending")
    return line


@contextlib.contextmanager
def _spool() -> Iterator[Path]:
    """A temporary file for a copy of the results JSON, removed at the end."""
    import os
    import tempfile

    handle, name = tempfile.mkstemp(prefix="tracekit-results-", suffix=".json")
    os.close(handle)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


class _Tee:
    """Writes to the results output (if any) and to the reports' copy (all ``write_results`` calls)."""

    def __init__(self, out: IO[bytes] | None, copy: IO[bytes]) -> None:
        self._out, self._copy = out, copy

    def write(self, data: bytes) -> int:
        if self._out is not None:
            self._out.write(data)
        return self._copy.write(data)


def _write_reports(
    results: Path,
    results_dir: Path,
    results_name: str,
    html_dir: Path | None,
    html_single: Path | None,
    markdown_path: Path | None,
    junit_path: Path | None,
    library: CaseSet | None,
    fail_on: str,
) -> None:
    """The reports, from the results JSON at ``results`` (read entry by entry; ``trace_file`` is relative to
    ``results_dir``, the pages name ``results_name``)."""
    from tracekit.report import write_reports

    written = write_reports(
        results, html_dir, markdown_path, junit_path, cases=library, fail_on=fail_on,
        results_dir=results_dir, results_name=results_name, html_single=html_single,
    )  # fmt: skip
    for path in [written.index, written.markdown, written.junit]:
        if path is not None:
            click.echo(f"wrote {path}", err=True)
    if written.single is not None:
        click.echo(f"wrote {written.single.summary_line()}", err=True)
