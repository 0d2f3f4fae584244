"""What the diagnosis adds to analyze's cost per trace, in one process: ``analyze_trace`` over the same traces
with the invariants switched off and on (best of N rounds each, CPU time).

Usage::

    python3 benchmarks/diagnosis_overhead.py DIR [--limit 300] [--rounds 5] [--policy NAME]

DIR is a folder of traces, e.g. the corpus ``benchmarks/analyze_scaling.py --workdir W`` leaves in
``W/traces-300`` (every trace has tool errors: the worst case for the errors-talked-past invariant).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tracekit.analyze import entry
from tracekit.analyze.diagnosing import diagnose_entry
from tracekit.trace import load_trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--policy", default=None)
    args = parser.parse_args()
    traces = [load_trace(path, fast=True) for path in sorted(args.folder.glob("*.jsonl"))[: args.limit]]
    settings = entry.AnalyzeSettings(policy=args.policy)

    def per_trace() -> float:
        start = time.process_time()
        for trace in traces:
            entry.analyze_trace(trace, settings)
        return (time.process_time() - start) / len(traces) * 1000

    with_diagnosis = min(per_trace() for _ in range(args.rounds))
    entry.diagnose_entry = lambda trace, findings, verdict, policy, reference=None: (findings, None)
    try:
        without = min(per_trace() for _ in range(args.rounds))
    finally:
        entry.diagnose_entry = diagnose_entry
    print(f"{len(traces)} traces: without the diagnosis {without:.3f} ms CPU per trace, with it "
          f"{with_diagnosis:.3f} ms ({100 * (with_diagnosis / without - 1):+.0f}%)")  # fmt: skip


if __name__ == "__main__":
    main()
