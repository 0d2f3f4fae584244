"""``tracekit judge``: judge traces with the cases' LLM rubrics; ``tracekit judge agreement``: judge vs people.

``tracekit judge PATH...`` is short for ``tracekit judge run PATH...``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from tracekit.cli.exits import InputError
from tracekit.errors import TracekitError

# The tracekit modules a command needs are imported inside it, on purpose: that keeps `tracekit --help`
# and the start-up of every other command fast.

class _DefaultRun(click.Group):
    """A group whose first argument, when it names no subcommand, goes to ``run``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultRun)
def judge() -> None:
    """Judge traces with an LLM rubric (kept verdicts are reused offline); agreement studies.

    \b
    tracekit judge PATH... --cases DIR --model M [--offline] [--samples N] [--store DIR]
    tracekit judge agreement LABELS.jsonl [--verdicts FILE]...
    """


def _temperature(value: str) -> float | None:
    if value.lower() in ("none", "off", ""):
        return None
    try:
        return float(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a number or 'none'") from None


@judge.command("run")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--cases", "cases_dir", default="cases", show_default=True, type=click.Path(path_type=Path),
              help="The case library (rubrics and criteria).")
@click.option("--case", "case_id", help="Bind every trace to this case (default: each trace's header).")
@click.option("--model", help="Judge model (PREFIX:NAME goes to the model client registered for PREFIX, e.g. the "
              "offline demo's rule-based judge). Offline without it: whichever model's kept verdicts.")
@click.option("--offline", is_flag=True, help="Never call the judge; verdicts not kept stay pending.")
@click.option("--samples", default=1, show_default=True, type=click.IntRange(min=1),
              help="Answers per request; the majority decides.")
@click.option("--store", default="recordings/judge", show_default=True, type=click.Path(path_type=Path),
              help="Where verdicts are kept (judge exchanges, replayed by request key).")
@click.option("--base-url", help="Judge API base URL (default: ANTHROPIC_BASE_URL or the Anthropic API).")
@click.option("--temperature", "temperature", default="0", show_default=True,
              help="Sampling temperature, or 'none' for models that reject it.")
@click.option("--max-tokens", default=1024, show_default=True, type=click.IntRange(min=16))
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the judged checks here.")
def run(
    paths: tuple[Path, ...],
    cases_dir: Path,
    case_id: str | None,
    model: str | None,
    offline: bool,
    samples: int,
    store: Path,
    base_url: str | None,
    temperature: str,
    max_tokens: int,
    json_path: Path | None,
) -> None:
    """Judge the traces in PATH... (files or folders) whose case scores with an LLM judge.

    Prints one line per trace. Exit status: 0 when it ran (whatever the verdicts), 2 on bad usage or
    unreadable input.
    """
    from tracekit import __version__
    from tracekit.analyze.binding import bind_case
    from tracekit.cases.loader import load_cases
    from tracekit.judge import TEMPLATE_VERSION, CaseJudge, JudgeConfig
    from tracekit.judge.transport import JUDGE_SOURCE
    from tracekit.trace import load_trace, trace_files

    if model is None and not offline:
        raise click.UsageError("give --model M to call the judge, or --offline to use kept verdicts only")
    try:
        files = trace_files(paths)
        cases = load_cases(cases_dir).cases
        config = JudgeConfig(model=model, store=store, offline=offline, samples=samples, base_url=base_url,
                             temperature=_temperature(temperature), max_tokens=max_tokens)  # fmt: skip
        case_judge = CaseJudge(config)
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    results: list[dict[str, Any]] = []
    tally: dict[str, int] = {}
    with case_judge:
        for path in files:
            try:
                trace = load_trace(path)
            except TracekitError as exc:
                raise InputError(str(exc)) from exc
            if trace.header.source == JUDGE_SOURCE:  # the judge's own kept exchanges, e.g. under recordings/judge
                continue
            case, problem = bind_case(trace, cases, case_id)
            if case is None or not case.uses_judge:
                why = problem or ("bound to no case" if case is None else f"{case.id} is scored {case.scoring}")
                click.echo(f"{trace.trace_id}  skipped: {why}", err=True)
                continue
            check = case_judge.judge(case, trace).to_dict()
            results.append({"trace_id": trace.trace_id, "source": str(path), "case_id": case.id, "check": check})
            tally[check["result"]] = tally.get(check["result"], 0) + 1
            meta = check["judge"]
            click.echo(f"{trace.trace_id}  {case.id}  {check['result']:<10}  [{meta['source']}, {meta['model']}]  "
                       f"{check['evidence']}")  # fmt: skip
        calls = case_judge.calls
    if json_path is not None:
        from tracekit.output import write_json

        document = {"tracekit": __version__,
                    "judge": {"model": model, "template": TEMPLATE_VERSION, "store": str(store), "offline": offline,
                              "samples": samples, "calls": calls},
                    "results": results}  # fmt: skip
        write_json(json_path, document)
    counts = ", ".join(f"{number} {result}" for result, number in sorted(tally.items())) or "nothing to judge"
    click.echo(f"{len(results)} judged: {counts}; {calls} judge calls")


@judge.command("agreement")
@click.argument("labels_path", type=click.Path(path_type=Path))
@click.option("--verdicts", "verdict_paths", multiple=True, type=click.Path(path_type=Path),
              help="Results JSON of 'tracekit judge --json' or 'tracekit analyze --json' (repeatable).")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the report as JSON here.")
def agreement(labels_path: Path, verdict_paths: tuple[Path, ...], json_path: Path | None) -> None:
    """Compare the judge's verdicts with human labels (LABELS.jsonl: trace_id, case_id, label[, judge]).

    Prints agreement, Cohen's kappa and the confusion table (rows: people, columns: judge).
    """
    from tracekit.judge.agreement import compare, load_labels, load_verdicts

    try:
        labels = load_labels(labels_path)
        verdicts = load_verdicts(verdict_paths)
    except TracekitError as exc:
        raise InputError(str(exc)) from exc
    report = compare(labels, verdicts)
    click.echo(report.render())
    for item in report.disagreements:
        click.echo(f"  disagree: {item['trace_id']} {item['case_id'] or ''}  human {item['human']}, "
                   f"judge {item['judge']}")  # fmt: skip
    if json_path is not None:
        from tracekit.output import write_json

        write_json(json_path, report.to_dict())
