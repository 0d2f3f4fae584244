"""Instructions per trace of each stage of ``analyze_file``, counted by callgrind: where the analysis's cost goes.

Usage::

    python3 benchmarks/analyze_stages.py DIR [--traces 30] [--stages parse,read,graph,detect,entry,json,file]

``DIR`` is a folder of trace files (``analyze_scaling.py --workdir`` writes its 1,000-trace corpus there). Each
stage runs in its own process under ``valgrind --tool=callgrind --collect-atstart=no
--toggle-collect=functools_reduce`` with ``PYTHONHASHSEED=0``: only what runs inside a ``functools.reduce`` over
``--traces`` files (after 3 warm-up files) is counted, so imports and start-up are not. Each stage runs one
more step than the one before it, so the differences are the steps' own costs:

- ``parse``: read the file and ``orjson.loads`` each line (what the target is measured against);
- ``read``: ``load_for_analysis`` (the records into the mirrors);
- ``graph``: + ``trace_graph`` (the call graph's nodes and the records indexed by kind);
- ``detect``: + the eight detectors (``detect`` builds the graph itself);
- ``entry``: + the rest of the analysis, the entry as its results model (``analyze_trace``);
- ``json``: + the entry's JSON (``to_json_bytes``);
- ``file``: ``analyze_file`` whole (skip tests, digest, redaction).

The counts do not move with the machine's load: the figures to compare between commits.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

STAGES = ("parse", "read", "graph", "detect", "entry", "json", "file")

RUN_STAGE = """
import functools, sys
from pathlib import Path
import orjson
from tracekit.analyze.detectors import detect
from tracekit.analyze.entry import AnalyzeSettings, _default_detector_options, analyze_trace
from tracekit.analyze.graph import trace_graph
from tracekit.analyze.reading import load_for_analysis
from tracekit.analyze.results import analyze_file
from tracekit.redact import default_redactor

stage, folder, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
settings, options = AnalyzeSettings(), _default_detector_options()
default_redactor()

def parse(path):
    with open(path, "rb") as handle:
        for line in handle:
            orjson.loads(line)

STEPS = {
    "parse": parse,
    "read": lambda path: load_for_analysis(path, settings),
    "graph": lambda path: trace_graph(load_for_analysis(path, settings)),
    "detect": lambda path: detect(load_for_analysis(path, settings), options),
    "entry": lambda path: analyze_trace(load_for_analysis(path, settings), settings),
    "json": lambda path: analyze_trace(load_for_analysis(path, settings), settings).to_json_bytes(),
    "file": lambda path: analyze_file(path, settings),
}
step = STEPS[stage]
files = sorted(str(path) for path in Path(folder).glob("*.jsonl"))[: count + 3]
for path in files[:3]:
    step(path)
functools.reduce(lambda _, path: step(path), files[3:], None)
"""


def count_stage(stage: str, folder: str, traces: int) -> float:
    """Instructions per trace of one stage (millions)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce",
                   f"--callgrind-out-file={out}", sys.executable, "-c", RUN_STAGE, stage, folder, str(traces)]
        subprocess.run(command, check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        totals = re.search(r"^totals: (\d+)", out.read_text(), re.MULTILINE)
        if totals is None:
            raise SystemExit(f"{stage}: callgrind wrote no totals")
        return int(totals.group(1)) / traces / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="A folder of trace files (at least --traces + 3).")
    parser.add_argument("--traces", type=int, default=30, help="Traces counted per stage (default 30).")
    parser.add_argument("--stages", default=",".join(STAGES), help="Stages to count, comma-separated.")
    args = parser.parse_args()
    counts = {stage: count_stage(stage, args.folder, args.traces) for stage in args.stages.split(",")}
    print("| stage (cumulative) | M instructions per trace | this stage |")
    print("|---|---:|---:|")
    previous = None
    for stage, value in counts.items():
        own = "" if previous is None or stage == "read" else f"{value - previous:+.3f}"
        print(f"| {stage} | {value:.3f} | {own} |")
        previous = value
    if "parse" in counts and "file" in counts:
        print(f"\nanalyze_file over the parse: {counts['file'] / counts['parse']:.2f}x")


if __name__ == "__main__":
    main()
