"""The most that moving ``tracekit record``'s work can give at concurrency N, measured (issue 31, item 7).

Issue 31 asks for ``tracekit record`` at concurrency 64 at >= 0.9x the bare aiohttp forwarder's rate, by moving
the recording work off the request path: a recorder process fed through a pipe, or worker processes behind
one listening socket. Before building either, this measures what each could give at best on this machine, by
running ``tracekit record`` with the part that would move taken away entirely (nothing is handed over, so the
hand-over's own cost is not paid either), in the same rotating rounds as the forwarder and the shipped proxy
(``proxy_load.measure_load``):

- ``tracekit record``: as shipped (``tracekit record``, the allocator it runs with included);
- ``recording removed``: the same process with ``Recorder.record`` a no-op: no record built, serialized,
  redacted or written, no trace file made. A recorder process can take at most this off the event loop;
- ``2 workers``: two ``tracekit record`` processes behind one port (``SO_REUSEPORT``, the kernel spreading the
  64 connections), each with sessions of its own and no registry between them. Worker processes sharing one
  registry pay that registry's round trips on top, so this is their ceiling;
- ``2 workers, recording removed``: both at once, the ceiling of any placement of the work on two processes.

CPU ms/req sums the target's processes. None of these variants is a product: a removed recording loses the
traces, and workers without a shared registry split any session whose requests use more than one
connection (an SDK's pool does). They are upper bounds, measured.

Usage::

    python benchmarks/proxy_ceiling.py [--stream] [--route /v1/responses] [--concurrency 64] [--rounds 6]
        [--per-connection 20]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proxy_load import add_load_options, run_load  # sibling scripts
from proxy_targets import start_forwarder, start_upstream, started, stop_all

RECORD = "tracekit record"
REMOVED = "recording removed"
WORKERS = "2 workers"
WORKERS_REMOVED = "2 workers, recording removed"
FORWARDER = "bare aiohttp forwarder"


def serve_variant(recording: bool, reuse_port: bool, argv: list[str]) -> None:
    """Run ``tracekit record ARGV`` in this process, its recording removed or its socket shared (see the
    module docstring)."""
    # (in the serving child only: the parent measures, and imports nothing of tracekit)
    from tracekit.cli import cli
    from tracekit.proxy import launch
    from tracekit.proxy.recorder import Recorder

    if not recording:
        Recorder.record = lambda *args, **kwargs: None  # type: ignore[method-assign]
    if reuse_port:

        def bind_shared(host: str, port: int) -> socket.socket:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            return sock

        launch.bind = bind_shared
    cli(["record", *argv], prog_name="tracekit")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_load_options(parser)
    parser.add_argument("--serve", choices=["removed", "shared", "shared-removed"], help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.serve:
        serve_variant("removed" not in args.serve, "shared" in args.serve, rest)
    # The allocator `tracekit record` runs with (tracekit.cli.entry), for the variants run in-process here.
    env = {**os.environ, "PYTHONMALLOC": os.environ.get("PYTHONMALLOC", "malloc")}
    processes: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory() as scratch:
        try:
            upstream = start_upstream(Path(scratch), processes)

            def record(name: str, serve: str | None, port: int = 0) -> tuple[int, int]:
                argv = ["--upstream", upstream, "--port", str(port), "--out", str(Path(scratch) / name)]
                if serve is None:
                    return started(["tracekit", "record", *argv], processes)
                return started([sys.executable, __file__, "--serve", serve, *argv], processes, env)

            pids: dict[str, list[int]] = {}
            ports: dict[str, int] = {}
            pid, ports[RECORD] = record("record", None)
            pids[RECORD] = [pid]
            pid, ports[REMOVED] = record("removed", "removed")
            pids[REMOVED] = [pid]
            for name, serve in ((WORKERS, "shared"), (WORKERS_REMOVED, "shared-removed")):
                first, port = record(name.replace(" ", "-").replace(",", "") + "-1", serve)
                second, _ = record(name.replace(" ", "-").replace(",", "") + "-2", serve, port)
                pids[name], ports[name] = [first, second], port
            pid, ports[FORWARDER] = start_forwarder(upstream, processes)
            pids[FORWARDER] = [pid]
            results = run_load(ports, pids, args)
        finally:
            stop_all(processes)
    kind = f"{args.route} {'SSE' if args.stream else 'JSON'}"
    forwarder_rate = results[FORWARDER]["rate"]
    print(f"| target ({kind}, c{args.concurrency}) | req/s (median) | x forwarder | CPU ms/req |\n|---|---|---|---|")
    for name, row in results.items():
        print(f"| {name} | {row['rate']:.0f} | {row['rate'] / forwarder_rate:.2f}x | {row['cpu_ms']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
