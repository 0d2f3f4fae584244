"""How well the rule-based diagnosis finds the critical step of real tau-bench failures (issue 29's figures).

Usage::

    python3 benchmarks/diagnosis_tau.py TAU_BENCH_FILE [--policy tau-airline] [--out FILE.md]

TAU_BENCH_FILE is a ``historical_trajectories/*.json`` file of sierra-research/tau-bench. The script imports
it (``tracekit import tau-bench``), runs ``tracekit analyze --policy POLICY --json`` twice (on the import as
it is, whose headers keep tau-bench's ground-truth actions, ``info.task.actions``, read as the reference
actions; and on a copy whose headers lost ``info``: the policy alone), and reports from the results alone:

- the share of reward-0 trajectories whose diagnosis names a critical step (target: at least 90%);
- the share of reward-1 trajectories with a violation the diagnosis calls critical (target: at most 10%),
  each one listed with its evidence, to be explained by hand;
- the categories of the critical steps, and the rules that decided them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--policy", default="tau-airline")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        traces, bare = Path(work) / "traces", Path(work) / "without-reference"
        tracekit = [sys.executable, "-m", "tracekit"]
        subprocess.run([*tracekit, "import", "tau-bench", str(args.file), "--out", str(traces)], check=True)
        bare.mkdir()
        for path in sorted(traces.glob("*.jsonl")):
            header, rest = path.read_text(encoding="utf-8").split("\n", 1)
            record = json.loads(header)
            record.get("meta", {}).pop("info", None)
            (bare / path.name).write_text(json.dumps(record, ensure_ascii=False) + "\n" + rest, encoding="utf-8")
        documents = []
        for folder in (traces, bare):
            results = Path(work) / f"{folder.name}.json"
            subprocess.run([*tracekit, "analyze", str(folder), "--policy", args.policy, "--json", str(results)],
                           check=True)  # fmt: skip
            documents.append(json.loads(results.read_text(encoding="utf-8")))
    text = report(*documents, args)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    print(text)


def _figures(document: dict) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """(reward-0 traces, those with a critical step, reward-1 traces, those with a critical violation)."""
    failed = [t for t in document["traces"] if t["meta"].get("reward") == 0]
    passed = [t for t in document["traces"] if t["meta"].get("reward") == 1]
    named = [t for t in failed if (t.get("diagnosis") or {}).get("step") is not None]
    return failed, named, passed, [t for t in passed if _critical(t)]


def report(document: dict, bare: dict, args: argparse.Namespace) -> str:
    failed, named, passed, false = _figures(document)
    _, bare_named, _, bare_false = _figures(bare)
    categories = Counter((t.get("diagnosis") or {}).get("category", "(none)") for t in failed)
    rules = Counter((t.get("diagnosis") or {}).get("rule") or "(none)" for t in failed)
    lines = [
        f"# Diagnosis on tau-bench ({args.file.name}, policy {args.policy})",
        "",
        f"Command: `python3 benchmarks/diagnosis_tau.py ../shared/data/tau-bench/{args.file.name} "
        f"--policy {args.policy} --out benchmarks/results/diagnosis_tau_airline.md` (two runs give the same "
        "figures: the analysis is deterministic)",
        "",
        "No model is involved: the figures are the rule-based diagnosis's (no judge, scripted or real).",
        "",
        "| figure | with the reference actions | policy alone | target |",
        "|---|---|---|---|",
        f"| reward-0 trajectories with a critical step | {len(named)}/{len(failed)} ({_pct(len(named), len(failed))}) "
        f"| {len(bare_named)}/{len(failed)} ({_pct(len(bare_named), len(failed))}) | at least 90% |",
        f"| reward-1 trajectories with a critical violation | {len(false)}/{len(passed)} "
        f"({_pct(len(false), len(passed))}) | {len(bare_false)}/{len(passed)} ({_pct(len(bare_false), len(passed))}) "
        "| at most 10% |",
        "",
        "## Categories of the critical step (reward 0, with the reference actions)",
        "",
        "| category | trajectories |",
        "|---|---|",
        *[f"| {name} | {count} |" for name, count in categories.most_common()],
        "",
        "## Rules that decided it (reward 0, with the reference actions)",
        "",
        "| rule | trajectories |",
        "|---|---|",
        *[f"| {name} | {count} |" for name, count in rules.most_common()],
        "",
        "## Reward-1 trajectories with a critical violation",
        "",
    ]
    for trace in false:
        diagnosis = trace["diagnosis"]
        message = diagnosis["evidence"][0]["message"] if diagnosis["evidence"] else ""
        lines.append(f"- `{trace['trace_id']}` step {diagnosis['step']}, {diagnosis['rule']}: {message}")
    return "\n".join(lines) + "\n"


def _critical(trace: dict) -> bool:
    diagnosis = trace.get("diagnosis") or {}
    return diagnosis.get("step") is not None and not diagnosis.get("recovered")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


if __name__ == "__main__":
    main()
