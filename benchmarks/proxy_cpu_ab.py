"""CPU per request of two builds of ``tracekit record`` side by side at concurrency N (issue 31, item 7).

On a shared machine the rates of two runs made one after the other differ by 2x, so a change to the
proxy's per-request work is measured here as CPU per request of both builds against the same load client
in the same rotating rounds (``proxy_load.measure_load``, as ``proxy_latency.py --concurrency`` does), with
the bare aiohttp forwarder as the third target. ``--other`` is the ``tracekit`` executable of the other
build (a venv with main installed, say); this build's is the one on PATH.

Usage::

    python benchmarks/proxy_cpu_ab.py --other OTHER_VENV/bin/tracekit [--stream] [--route /v1/responses]
        [--concurrency 64] [--rounds 6]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proxy_load import add_load_options, run_load  # sibling scripts
from proxy_targets import start_forwarder, start_upstream, started, stop_all


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--other", required=True, help="The tracekit executable of the build to compare with.")
    add_load_options(parser)
    args = parser.parse_args()
    this = shutil.which("tracekit")
    if this is None:
        raise SystemExit("no tracekit on PATH")
    processes: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory() as scratch:
        try:
            upstream = start_upstream(Path(scratch), processes)
            builds = {"this build": this, "other build": args.other}
            pids, ports = {}, {}
            for name, executable in builds.items():
                out = str(Path(scratch) / name.replace(" ", "-"))
                pids[name], ports[name] = started([executable, "record", "--upstream", upstream, "--port", "0",
                                                   "--out", out], processes)  # fmt: skip
            pids["forwarder"], ports["forwarder"] = start_forwarder(upstream, processes)
            results = run_load(ports, pids, args)
        finally:
            stop_all(processes)
    kind = f"{args.route} {'SSE' if args.stream else 'JSON'}"
    print(f"| target ({kind}, c{args.concurrency}) | req/s (median) | CPU ms/req |\n|---|---|---|")
    for name, row in results.items():
        print(f"| {name} | {row['rate']:.0f} | {row['cpu_ms']:.3f} |")
    change = results["this build"]["cpu_ms"] / results["other build"]["cpu_ms"] - 1
    print(f"\nCPU per request of this build against the other: {change:+.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
