"""``tracekit analyze`` beyond one process: the local engine, ``--jobs 2`` and ``--engine ray`` (two workers),
from local disk and from an S3 API (the moto server on loopback).

Usage::

    python3 benchmarks/analyze_scale.py [--size 100000] [--s3-size 10000] [--small 1000] [--repeats 2]
                                        [--workdir DIR] [--out FILE]

The corpus is ``analyze_scaling.py``'s synthetic traces (16 tool calls each, 16 kB a file). Every run is
``tracekit analyze DIR_OR_URL --json OUT`` in a fresh process, measured from a wrapper process:

- wall seconds;
- CPU seconds of the command's processes (``RUSAGE_CHILDREN``: the command and every descendant it reaped;
  Ray's workers are children of its raylet, which the driver reaps at shutdown, so they are counted when
  Ray exits cleanly) and machine-wide busy CPU seconds over the run (``/proc/stat``: everything on the
  machine, other users included: an upper bound);
- peak RSS: the largest single process of the run (``ru_maxrss``), not the sum over Ray's processes.

For each corpus (local disk, then S3) the engines take turns, ``--repeats`` rounds, and every run is kept
(two runs show the spread). Every engine's results JSON is compared byte for byte with the local engine's.
The Ray overhead is the difference between ``--engine ray`` and the local engine on ``--small`` traces.

The S3 corpus is uploaded to a moto server that this script runs in its own process (a Python S3 server:
its CPU is this script's, not the command's, and it is slow, so the S3 figures bound what a real store
would give from below).
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyze_scaling import make_templates, tracekit_command, write_corpus

WRAPPER = """
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
elapsed = time.perf_counter() - start
if done.returncode != 0:
    sys.stderr.write(done.stderr.decode(errors="replace")[-3000:])
    sys.exit(done.returncode)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)
"""


def busy_seconds() -> float:
    """Machine-wide busy CPU seconds since boot (/proc/stat: user+nice+system+irq+softirq+steal)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def measure(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Wall, CPU (the command's processes), machine busy CPU and peak RSS (MB) of one run."""
    before = busy_seconds()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, env=env)
    busy = busy_seconds() - before
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    elapsed, maxrss, cpu = done.stdout.split()
    return {"wall": float(elapsed), "cpu": float(cpu), "busy": busy, "rss": int(maxrss) / 1024}


def engines(tk: list[str]) -> dict[str, list[str]]:
    return {
        "local": [],
        "local --jobs 2": ["--jobs", "2"],
        "ray (2 workers)": ["--engine", "ray", "--jobs", "2"],
    }


def run_corpus(source: str, out_dir: Path, tk: list[str], repeats: int, env: dict[str, str], label: str) -> dict:
    """Every engine on ``source``, taking turns; every run kept; outputs compared with the local engine's."""
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in engines(tk)}
    for round_number in range(repeats):
        for name, extra in engines(tk).items():
            out = out_dir / f"{label}-{name.split()[0]}-{name.count('2')}-{round_number}.json"
            command = [*tk, "analyze", source, "--no-progress", "--json", str(out), *extra]
            runs[name].append(measure(command, env))
            print(f"{label} {name} round {round_number + 1}: {runs[name][-1]}", file=sys.stderr, flush=True)
    reference = (out_dir / f"{label}-local-0-0.json").read_bytes()
    identical = {
        name: all((out_dir / f"{label}-{name.split()[0]}-{name.count('2')}-{r}.json").read_bytes() == reference
                  for r in range(repeats))
        for name in engines(tk)
    }  # fmt: skip
    return {"runs": runs, "identical": identical}


class S3Server:
    """A moto S3 server on a free loopback port, with fake credentials for the commands' environment."""

    def __enter__(self) -> S3Server:
        from moto.server import ThreadedMotoServer

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()
        self.env = {
            "AWS_ACCESS_KEY_ID": "benchmark", "AWS_SECRET_ACCESS_KEY": "benchmark", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{self.port}", "AWS_EC2_METADATA_DISABLED": "true",
        }  # fmt: skip
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.stop()

    def upload(self, folder: Path, bucket: str, prefix: str) -> float:
        import boto3

        client = boto3.client("s3", endpoint_url=self.env["AWS_ENDPOINT_URL"], aws_access_key_id="benchmark",
                              aws_secret_access_key="benchmark", region_name="us-east-1")  # fmt: skip
        client.create_bucket(Bucket=bucket)
        start = time.perf_counter()
        for path in sorted(folder.glob("*.jsonl")):
            client.put_object(Bucket=bucket, Key=f"{prefix}/{path.name}", Body=path.read_bytes())
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--s3-size", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tk-scale-"))
    tk = tracekit_command()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    load_before = os.getloadavg()
    templates = make_templates()
    results: dict[str, dict] = {}
    corpora = {}
    for size in sorted({args.small, args.size, args.s3_size}):
        folder = workdir / f"traces-{size}"
        if not folder.exists():
            write_corpus(folder, size, templates)
        corpora[size] = folder
    outputs = workdir / "out"
    outputs.mkdir(exist_ok=True)
    results[f"disk {args.small:,}"] = run_corpus(str(corpora[args.small]), outputs, tk, args.repeats, env, "small")
    results[f"disk {args.size:,}"] = run_corpus(str(corpora[args.size]), outputs, tk, args.repeats, env, "disk")
    with S3Server() as s3:
        upload = s3.upload(corpora[args.s3_size], "tk-bench", "traces")
        s3_env = {**env, **s3.env}
        results[f"S3 {args.s3_size:,}"] = run_corpus("s3://tk-bench/traces", outputs, tk, args.repeats, s3_env, "s3")
    load_after = os.getloadavg()
    text = render(results, args, load_before, load_after, upload)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


def render(results: dict, args: argparse.Namespace, before: tuple, after: tuple, upload: float) -> str:
    lines = [
        "# `tracekit analyze` beyond one process: local, `--jobs 2`, `--engine ray`; disk and S3",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()}; load average {before[0]:.1f} before, {after[0]:.1f} after (a shared machine: "
        "other processes ran at the same time).",
        "",
        f"Command: `python3 benchmarks/analyze_scale.py --size {args.size} --s3-size {args.s3_size} "
        f"--small {args.small} --repeats {args.repeats}`",
        "",
        "Synthetic traces of `analyze_scaling.py` (16 tool calls, 16 kB each). Each cell: run 1 / run 2. "
        "wall s; CPU s of the command's processes; machine-wide busy CPU s; peak RSS of the largest process.",
        "",
        "| corpus | engine | wall s | CPU s | machine busy s | peak RSS MB | same bytes as local |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for corpus, data in results.items():
        for engine, runs in data["runs"].items():
            def cell(key: str, digits: int = 1, runs: list = runs) -> str:
                return " / ".join(f"{run[key]:.{digits}f}" for run in runs)

            same = "yes" if data["identical"][engine] else "NO"
            lines.append(f"| {corpus} | {engine} | {cell('wall')} | {cell('cpu')} | {cell('busy')} | "
                         f"{cell('rss', 0)} | {same} |")  # fmt: skip
    lines += ["", f"Upload of the S3 corpus to the moto server: {upload:.1f} s.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
