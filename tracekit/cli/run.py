"""``tracekit run``: run cases with the reference agent or your own agent, through the proxy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tracekit.errors import InputError, TracekitError

if TYPE_CHECKING:
    from tracekit.cases.loader import CaseLibrary
    from tracekit.runner.jobs import Job


# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.

@click.command()
@click.argument("cases", nargs=-1, required=True)
@click.option("--model", required=True,
              help="Model name for the API; a name whose prefix has a registered model client (PREFIX:NAME, "
                   "e.g. the offline demo's, see the README) goes where that client says.")
@click.option("--provider", type=click.Choice(["anthropic", "openai"]), default="anthropic", show_default=True,
              help="Wire protocol of the model API (the reference agent uses that provider's SDK).")
@click.option("--base-url", help="Model API base URL (default: the provider's; e.g. an OpenAI-compatible server).")
@click.option("--groups", default=None, help="Skill groups to run, e.g. A,B (default: every group a case defines).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True, help="Trials per case and group.")
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True, help="Jobs at a time.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Run folder: one trace per (case, group, repeat); a re-run skips the complete ones.")
@click.option("--agent-cmd", help="Run this command per job instead of the reference agent "
                                  "(docs/external-agents.md).")
@click.option("--timeout", type=float, default=600.0, show_default=True, help="Seconds per --agent-cmd job.")
@click.option("--cases-dir", default="cases", show_default=True, type=click.Path(path_type=Path),
              help="Case library.")
@click.option("--max-turns", type=click.IntRange(min=1), default=25, show_default=True,
              help="Reference agent: model calls per session.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=2048, show_default=True,
              help="Reference agent: max_tokens of each model call.")
@click.option("--drop-request-bodies", is_flag=True,
              help="Leave each model call's request body out of the traces (replay keys stay): smaller files "
                   "for committed examples.")
@click.option("--summary/--no-summary", default=True, show_default=True,
              help="Analyze the run's traces and print verdicts, pass^k and the A/B pairs.")
@click.option("--judge-model", default=None,
              help="Summary: call this judge model for the judged cases' verdicts not kept yet (as analyze "
                   "--judge-model). Without it, kept verdicts only.")
@click.option("--progress/--no-progress", default=True, help="Progress on stderr.")
def run(
    cases: tuple[str, ...], model: str, provider: str, base_url: str | None, groups: str | None, repeat: int,
    concurrency: int, out_dir: Path, agent_cmd: str | None, timeout: float, cases_dir: Path, max_turns: int,
    max_tokens: int, drop_request_bodies: bool, summary: bool, judge_model: str | None, progress: bool,
) -> None:
    """Run CASES (ids, id prefixes such as B2-TS, 'all', or case files) against a model.

    \b
    Every model request goes through an in-process tracekit proxy that applies the case's intercepts
    and records the trace, bound to its case, skill group and repeat index. A real model needs only
    ANTHROPIC_API_KEY (or OPENAI_API_KEY with --provider openai, or --base-url):
      tracekit run all --model my-model --out runs/my-model
    Models named PREFIX:NAME go to the client registered for PREFIX (tracekit.clients); the offline
    demo's stand-in models work this way, with no key (README, "Running the case library").
    Exit status: 0 when the run finished (whatever the verdicts), 1 when a job ended in an error,
    2 on bad usage, 130 when interrupted (complete traces are kept; re-run to resume).
    """
    from tracekit.cases.loader import load_cases
    from tracekit.progress import Progress
    from tracekit.runner.agent import AgentLimits
    from tracekit.runner.harness import RunSettings
    from tracekit.runner.jobs import plan_jobs, select_cases
    from tracekit.runner.run import run_jobs

    try:
        library = load_cases(cases_dir)
        chosen = select_cases(library, cases)
        wanted = [group.strip() for group in groups.split(",") if group.strip()] if groups else None
        jobs = plan_jobs(chosen, wanted, repeat)
        settings = RunSettings(library=library, out_dir=out_dir, model=model, provider=provider, base_url=base_url,
                               agent_cmd=agent_cmd, timeout=timeout,
                               limits=AgentLimits(max_turns=max_turns, max_tokens=max_tokens),
                               drop_request_bodies=drop_request_bodies)
        settings.check()
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    if not jobs:
        raise InputError("no jobs: the chosen cases define none of the requested groups")
    bar = Progress(len(jobs), enabled=progress)
    try:
        report = run_jobs(jobs, settings, concurrency=concurrency, progress=bar)
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    ran = len(report.results)
    click.echo(f"{ran} jobs run, {len(report.skipped)} already complete, {len(report.errors)} with errors "
               f"-> {out_dir}", err=True)
    for result in report.errors[:20]:
        click.echo(f"  {result.job.name}: {result.error}", err=True)
    if report.interrupted:
        click.echo("interrupted: complete traces are kept; run the same command again to resume", err=True)
        sys.exit(130)
    if summary:
        _print_summary(jobs, settings.out_dir, library, repeat, judge_model)
    sys.exit(1 if report.errors else 0)


def _print_summary(jobs: list[Job], out_dir: Path, library: CaseLibrary, repeat: int, judge_model: str | None) -> None:
    from tracekit.analyze.run_summary import format_summary, run_summary, trial_verdicts
    from tracekit.application import kept_judge
    from tracekit.output import write_json

    judge, note = kept_judge([out_dir], model=judge_model)  # as `tracekit analyze OUT --cases` would judge
    click.echo(note, err=True)
    trials = trial_verdicts(jobs, out_dir, library, judge)
    result = run_summary(trials, repeat)
    write_json(out_dir / "run-summary.json", {"summary": result, "trials": trials})
    for line in format_summary(result):
        click.echo(line)
