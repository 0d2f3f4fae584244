"""``tracekit analyze``: offline analysis of trace files into the results JSON (and reports)."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from tracekit.cli.common import EXIT_CHECK_FAILED, EXIT_USAGE, InputError
from tracekit.progress import Progress

if TYPE_CHECKING:
    from tracekit.analyze.results import AnalyzeSettings, FileOutcome, RunOutcome

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.

#: Show a progress bar from this many traces on (when standard error is a terminal).
PROGRESS_FROM = 20


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--cases", "cases_dir", type=click.Path(path_type=Path), help="Case library: bind traces, run checks.")
@click.option("--case", "case_id", help="Bind every trace to this case id (overrides the trace's case_id).")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the results JSON here ('-': stdout).")
@click.option("--html", "html_dir", type=click.Path(path_type=Path), help="Write the HTML report into this folder.")
@click.option("--markdown", "markdown_path", type=click.Path(path_type=Path), help="Write a Markdown summary here.")
@click.option("--junit", "junit_path", type=click.Path(path_type=Path), help="Write JUnit XML here.")
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(min=1), help="Worker processes.")
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
    help="Kept judge verdicts for cases scored by the LLM judge (default: recordings/judge when it exists).",
)
@click.option(
    "--judge-model",
    help="Call this judge model for verdicts not kept yet ('scripted:judge': rule-based, in-process). "
    "Without it, judged cases use kept verdicts only and are pending otherwise.",
)
@click.option(
    "--judge-offline",
    is_flag=True,
    help="Never call the judge, even with --judge-model (which then only picks whose kept verdicts to use); "
    "verdicts not kept stay pending.",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: on a terminal).")
def analyze(
    paths: tuple[Path, ...],
    cases_dir: Path | None,
    case_id: str | None,
    json_path: Path | None,
    html_dir: Path | None,
    markdown_path: Path | None,
    junit_path: Path | None,
    jobs: int,
    fail_on: str | None,
    detector_options: tuple[str, ...],
    config_path: Path | None,
    detector_preset: str | None,
    judge_store: Path | None,
    judge_model: str | None,
    judge_offline: bool,
    progress: bool | None,
) -> None:
    """Analyze trace files (or folders of them) offline: findings, case verdicts, scores.

    Prints a summary; the full results go to --json. Exit status: 0 when it ran (whatever the verdicts),
    1 with --fail-on and a verdict at or below that level, 2 on bad usage or unreadable input (the other
    files are still analyzed). Unreadable lines are reported on stderr and in the JSON, never fatal.

    Cases scored by the LLM judge use the verdicts kept in --judge-store (offline, by default from
    recordings/judge); --judge-model M judges the others and keeps their verdicts. The judge's own kept
    exchanges found in a folder are skipped (counted in the summary).
    """
    settings, files = _prepare(paths, cases_dir, case_id, detector_options, config_path, detector_preset)
    if cases_dir is not None:
        settings = replace(settings, judge=_judge_config(judge_store, judge_model, judge_offline))
    show_progress = progress if progress is not None else (len(files) >= PROGRESS_FROM and sys.stderr.isatty())
    reports = html_dir is not None or markdown_path is not None or junit_path is not None
    to_stdout = json_path is not None and str(json_path) == "-"
    with contextlib.ExitStack() as stack:
        out, results_path = _open_output(stack, json_path, reports)
        outcome = _run(stack, files, settings, jobs, out, show_progress)
        if out is not None and not to_stdout:
            out.flush()
        click.echo(_summary_line(outcome), err=to_stdout)
        if json_path is None and not reports:
            click.echo("Write the full results with --json FILE.", err=True)
        if reports:
            assert results_path is not None
            _write_reports(results_path, html_dir, markdown_path, junit_path, cases_dir, fail_on or "fail")
    sys.stdout.flush()
    if outcome.unreadable_files:
        sys.exit(EXIT_USAGE)
    failing = {"fail"} if fail_on == "fail" else {"fail", "acceptable"} if fail_on == "acceptable" else set()
    if any(outcome.results.get(result) for result in failing):
        sys.exit(EXIT_CHECK_FAILED)


def _judge_config(store: Path | None, model: str | None, offline: bool = False) -> Any:
    """The judge for cases scored by it: kept verdicts (offline) unless a model is named and calling out is
    allowed; None when there is neither a store nor a model."""
    default = Path("recordings/judge")
    if model is None and store is None and not default.is_dir():
        return None
    from tracekit.judge import JudgeConfig, JudgeError

    try:
        return JudgeConfig(model=model, store=store or default, offline=offline or model is None)
    except JudgeError as exc:
        raise InputError(f"--judge-model: {exc}") from exc


def _prepare(
    paths: tuple[Path, ...],
    cases_dir: Path | None,
    case_id: str | None,
    detector_options: tuple[str, ...],
    config_path: Path | None,
    detector_preset: str | None = None,
) -> tuple[AnalyzeSettings, list[str]]:
    from tracekit.analyze.config import detector_options as resolve_detector_options
    from tracekit.analyze.results import AnalyzeSettings, load_library, trace_paths
    from tracekit.errors import TracekitError

    try:
        options = resolve_detector_options(config_path, detector_options, detector_preset)
        files = trace_paths(paths)
        if cases_dir is not None:
            library = load_library(str(cases_dir))
            if case_id is not None and case_id not in library.cases:
                raise InputError(f"--case {case_id}: no such case in {cases_dir}")
        elif case_id is not None:
            raise InputError("--case needs --cases DIR (the library the case comes from)")
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    named = frozenset(os.fspath(path) for path in paths if not path.is_dir())
    cases = str(cases_dir) if cases_dir is not None else None
    return AnalyzeSettings(cases, case_id, options, named_files=named), files


def _open_output(
    stack: contextlib.ExitStack, json_path: Path | None, reports: bool
) -> tuple[IO[bytes] | None, Path | None]:
    if json_path is not None and str(json_path) == "-":
        if reports:
            raise InputError("--json - cannot be combined with --html/--markdown/--junit; give a file")
        return sys.stdout.buffer, None
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        return stack.enter_context(open(json_path, "wb")), json_path
    if reports:
        import tempfile

        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tracekit-analyze-")))
        path = folder / "results.json"
        return stack.enter_context(open(path, "wb")), path
    return None, None


def _run(
    stack: contextlib.ExitStack,
    files: list[str],
    settings: AnalyzeSettings,
    jobs: int,
    out: IO[bytes] | None,
    show_progress: bool,
) -> RunOutcome:
    from tracekit.analyze.results import write_results

    bar = None
    if show_progress:
        bar = stack.enter_context(Progress(len(files), label="Analyzing"))

    def on_outcome(outcome: FileOutcome) -> None:
        for problem in outcome.problems:
            click.echo(f"warning: {problem}", err=True)
        if outcome.error is not None:
            click.echo(f"error: {outcome.error}", err=True)
        if bar is not None:
            bar.advance(str(outcome.path), ok=outcome.error is None)

    return write_results(files, out, settings, jobs=jobs, on_outcome=on_outcome)


def _summary_line(outcome: RunOutcome) -> str:
    summary = outcome.summary
    line = (
        f"{summary['traces']} traces, {summary['tool_calls']} tool calls, {summary['tool_errors']} tool errors, "
        f"{sum(summary['findings'].values())} findings"
    )
    if summary["bound_to_case"]:
        counts = ", ".join(f"{count} {name}" for name, count in summary["verdicts"].items() if count)
        line += f"; verdicts: {counts}"
    if summary["unreadable_files"]:
        line += f"; {summary['unreadable_files']} unreadable files"
    if summary.get("skipped_judge_exchanges"):
        line += f"; {summary['skipped_judge_exchanges']} judge exchanges skipped"
    return line


def _write_reports(
    results_path: Path,
    html_dir: Path | None,
    markdown_path: Path | None,
    junit_path: Path | None,
    cases_dir: Path | None,
    fail_on: str,
) -> None:
    from tracekit.report import write_reports

    outcome = write_reports(
        results_path, html_dir, markdown_path, junit_path, cases=cases_dir, fail_on=fail_on, results_dir=Path.cwd()
    )
    for path in [outcome.index, outcome.markdown, outcome.junit]:
        if path is not None:
            click.echo(f"wrote {path}", err=True)
