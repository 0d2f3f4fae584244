"""``tracekit report --html`` on large runs: build time per trace (linear or not), pagination, page sizes; and
``tracekit diff --html`` on the same runs.

Usage::

    python3 benchmarks/report_scale.py [--sizes 1000,10000,100000] [--diff-sizes 1000,10000,100000]
                                       [--repeats 2] [--workdir DIR] [--out FILE] [--keep]

The corpus is ``analyze_scaling.py``'s synthetic traces (16 tool calls each, 16 kB a file), analyzed once per
size by ``tracekit analyze DIR --json results.json`` (not measured here: see analyze_scale.md). Measured, in a
fresh process from a wrapper (wall, CPU of the command, peak RSS of the process):

- ``tracekit report results.json --html DIR``: one page per trace (each trace file read again), the paginated
  index (200 rows a page) and the finding-kind lists;
- ``tracekit diff results.json results.json --html DIR --json diff.json`` (``--diff-sizes`` only): every pair is
  found, aligned and its latency read from the trace files; none changed, so the HTML is the index alone.

Both read the results file entry by entry (``tracekit.results.stream``): peak RSS should stay flat in the number
of traces. Each command runs ``--repeats`` times; a cell gives every run, ``run 1 / run 2``.

Then the report folder is walked: pages, total bytes, the largest page of each kind. The HTML of a size is
removed before the next one unless ``--keep`` (100,000 trace pages are several GB).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyze_scaling import make_templates, tracekit_command, write_corpus

WRAPPER = """
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
elapsed = time.perf_counter() - start
if done.returncode not in (0, 1):
    sys.stderr.write(done.stderr.decode(errors="replace")[-3000:])
    sys.exit(done.returncode)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)
"""


def measure(command: list[str]) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of ``command`` in a fresh process."""
    done = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    elapsed, maxrss, cpu = done.stdout.split()
    return {"wall": float(elapsed), "cpu": float(cpu), "rss": int(maxrss) / 1024}


def walk(folder: Path) -> dict[str, object]:
    """Pages, bytes, and the largest page per kind (index pages, trace pages, lists, diff pair pages)."""
    kinds: dict[str, tuple[int, str]] = {}
    pages = total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            size = path.stat().st_size
            pages += 1
            total += size
            relative = path.relative_to(folder).as_posix()
            kind = relative.split("/")[0] if "/" in relative else "index pages"
            if size > kinds.get(kind, (0, ""))[0]:
                kinds[kind] = (size, relative)
    return {"pages": pages, "bytes": total, "largest": kinds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "report_scale.md")
    parser.add_argument("--diff-sizes", default="1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    diff_sizes = {int(size) for size in args.diff_sizes.split(",") if size}
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="report-scale-"))
    tk = tracekit_command()
    templates = make_templates()
    rows = []
    load = os.getloadavg()[0]
    for size in sizes:
        corpus = workdir / f"traces-{size}"
        if not corpus.exists():
            write_corpus(corpus, size, templates)
        results = workdir / f"results-{size}.json"
        if not results.exists():
            subprocess.run([*tk, "analyze", str(corpus), "--no-progress", "--json", str(results)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        html = workdir / f"html-{size}"
        diff_html = workdir / f"diff-{size}"
        reports, diffs = [], []
        diff_shape = None
        for _ in range(args.repeats):
            shutil.rmtree(html, ignore_errors=True)
            reports.append(measure([*tk, "report", str(results), "--html", str(html)]))
            print(f"{size} report: {reports[-1]}", file=sys.stderr, flush=True)
            shape = walk(html)
            if size in diff_sizes:
                shutil.rmtree(diff_html, ignore_errors=True)
                diffs.append(measure([*tk, "diff", str(results), str(results), "--html", str(diff_html),
                                      "--json", str(workdir / f"diff-{size}.json")]))  # fmt: skip
                print(f"{size} diff: {diffs[-1]}", file=sys.stderr, flush=True)
                diff_shape = walk(diff_html)
        report = {name: [run[name] for run in reports] for name in reports[0]}
        diff = {name: [run[name] for run in diffs] for name in diffs[0]} if diffs else None
        rows.append((size, report, shape, diff, diff_shape, results.stat().st_size))
        if not args.keep:
            shutil.rmtree(html, ignore_errors=True)
            shutil.rmtree(diff_html, ignore_errors=True)
        args.out.write_text(render(rows, load, os.getloadavg()[0], args), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


def cells(values: list[float], digits: int) -> str:
    """Every run's value, ``run 1 / run 2``."""
    return " / ".join(f"{value:,.{digits}f}" for value in values)


def commit() -> str:
    """The commit measured (``+ changes`` when the work tree differs from it)."""
    root = Path(__file__).resolve().parent.parent
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True,
                           text=True)  # fmt: skip
    return head.stdout.strip() + (" + changes" if dirty.stdout.strip() else "")


def render(rows: list, load_before: float, load_after: float, args: argparse.Namespace) -> str:
    lines = [
        "# `tracekit report --html` and `tracekit diff --html` on large runs",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()}; load average {load_before:.1f} before, {load_after:.1f} after (a shared machine).",
        "",
        f"Command: `python3 benchmarks/report_scale.py --sizes {args.sizes} --diff-sizes {args.diff_sizes} "
        f"--repeats {args.repeats}`, at commit {commit()}.",
        "",
        "Synthetic traces of `analyze_scaling.py` (16 tool calls, 16 kB each), analyzed once per size. Each cell "
        f"with several figures: run 1 / run 2 / ... ({args.repeats} runs).",
        "",
        "## report --html",
        "",
        "| traces | results JSON MB | wall s | CPU s | ms CPU / trace | peak RSS MB | pages | total MB "
        "| largest trace page kB | largest index page kB | largest list page kB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, report, shape, _diff, _diff_shape, json_bytes in rows:
        largest = shape["largest"]
        lines.append(
            f"| {size:,} | {json_bytes / 1e6:,.0f} | {cells(report['wall'], 1)} | {cells(report['cpu'], 1)} "
            f"| {cells([1000 * cpu / size for cpu in report['cpu']], 2)} "
            f"| {cells(report['rss'], 0)} | {shape['pages']:,} | {shape['bytes'] / 1e6:,.0f} "
            f"| {largest.get('traces', (0,))[0] / 1e3:.0f} | {largest.get('index pages', (0,))[0] / 1e3:.0f} "
            f"| {largest.get('kinds', (0,))[0] / 1e3:.0f} |"
        )
    lines += [
        "",
        "## diff --html (the results against themselves: every pair found and aligned, none changed)",
        "",
        "| traces | wall s | CPU s | ms CPU / pair | peak RSS MB | pages | index kB |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, _report, _shape, diff, diff_shape, _json_bytes in rows:
        if diff is None or diff_shape is None:
            continue
        lines.append(
            f"| {size:,} | {cells(diff['wall'], 1)} | {cells(diff['cpu'], 1)} "
            f"| {cells([1000 * cpu / size for cpu in diff['cpu']], 2)} "
            f"| {cells(diff['rss'], 0)} | {diff_shape['pages']:,} | {diff_shape['bytes'] / 1e3:.0f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
