"""``tracekit analyze`` per trace against an orjson-only parse, on traces shaped as the proxy records them.

Usage::

    python3 benchmarks/analyze_recorded_shape.py [--out benchmarks/results/analyze_recorded_shape.md]

``analyze_scaling.py`` measures minimal synthetic records (no request bodies), the hardest case for the
4x target since the parse is tiny. This script measures the shape tracekit analyzes in practice: it runs
the whole case library with ``tracekit run all --model scripted:reference`` (the offline demo: the
reference agent through the recording proxy against the scripted fake upstream, request bodies kept),
then times, in this process and in CPU time, best of 5:

- ``parse``: reading every file and ``orjson.loads`` of each line (nothing else);
- ``analyze``: ``load_trace(path, fast=True)`` + ``analyze_trace`` + the entry's JSON through the redactor, i.e. what
  ``tracekit analyze`` does per file, with the default options (no case library);
- ``analyze --cases``: the same with the case library bound (checks, verdicts, scores; judged cases read
  the kept verdicts under recordings/judge).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent


def make_corpus(folder: Path) -> list[Path]:
    """Run the case library offline into ``folder`` and return the trace files."""
    subprocess.run(
        [sys.executable, "-m", "tracekit", "run", "all", "--model", "scripted:reference",
         "--groups", "A,B", "--out", str(folder), "--concurrency", "2", "--no-summary",
         "--cases-dir", str(ROOT / "cases")],
        check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return sorted(folder.glob("*.jsonl"))


def cpu_per_trace(stage: Callable[[], None], count: int, repeats: int = 5) -> float:
    """Best CPU milliseconds per trace of ``stage`` over ``repeats`` runs."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        stage()
        best = min(best, time.process_time() - start)
    return best / count * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/analyze_recorded_shape.md")
    args = parser.parse_args()

    from tracekit.analyze.results import AnalyzeSettings, analyze_trace
    from tracekit.application import load_case_set
    from tracekit.redact import default_redactor
    from tracekit.trace import load_trace

    with tempfile.TemporaryDirectory(prefix="tracekit-recorded-") as tmp:
        files = make_corpus(Path(tmp) / "run")
        size = sum(path.stat().st_size for path in files)
        redact = default_redactor().redact_bytes
        with_cases = AnalyzeSettings(load_case_set(ROOT / "cases"))

        def parse() -> None:
            for path in files:
                with open(path, "rb") as handle:
                    for line in handle:
                        orjson.loads(line)

        def analyze() -> None:
            for path in files:
                redact(analyze_trace(load_trace(path, fast=True)).to_json_bytes())

        def analyze_cases() -> None:
            for path in files:
                redact(analyze_trace(load_trace(path, fast=True), with_cases).to_json_bytes())

        analyze_cases()  # loads the case library once, as a real run does at start-up
        figures = {name: cpu_per_trace(stage, len(files)) for name, stage in
                   (("parse", parse), ("analyze", analyze), ("analyze --cases", analyze_cases))}

    base = figures["parse"]
    lines = [
        "# `tracekit analyze` on traces shaped as the proxy records them",
        "",
        f"Command: `python3 benchmarks/analyze_recorded_shape.py`. Machine: {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
        f"{os.getloadavg()[0]:.1f} (CPU time is the figure to trust on a shared machine).",
        "",
        f"Corpus: {len(files)} traces ({size / 1024 / len(files):.1f} kB each on average) written by "
        "`tracekit run all --model scripted:reference --groups A,B` — the reference agent through the "
        "recording proxy against the scripted fake upstream, request bodies kept. No model produced them.",
        "",
        "| stage | CPU ms / trace | x parse |",
        "|---|---:|---:|",
        *(f"| {name} | {value:.3f} | {value / base:.2f} |" for name, value in figures.items()),
        "",
        "Target: `analyze` (default options) at most 4x the parse. See `analyze_scaling.md` for minimal "
        "synthetic records, where the parse is far cheaper and the ratio higher.",
    ]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
