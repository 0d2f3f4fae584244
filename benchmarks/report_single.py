"""The single-file HTML report (``--html-single``) at 300 and 10,000 traces: its size, what fills it, and
the time to write it; the folder report (``--html``) beside it at 300.

Usage::

    python3 benchmarks/report_single.py [--runs 2] [--large 10000] [--workdir DIR] [--out FILE]

Inputs, analyzed once each (not measured):

- 300: the bundled ``recordings/`` with ``--cases cases`` (298 traces of scripted runs, half of them failing:
  ``recordings/README.md``), ``tracekit analyze recordings --cases cases --json results-300.json``;
- 10,000: ``analyze_scaling.py``'s synthetic traces (16 tool calls, 16 kB each), every one bound to the case
  ``--case`` (default B2-TS-01, a flight search checked automatically) so that each gets a verdict and checks:
  the synthetic agent mostly fails them, which is the worst case for the file (every failing trace is a
  candidate for embedding, so the cap decides).

Measured, ``--runs`` times each, in a fresh process from a wrapper (wall, CPU, peak RSS):
``tracekit report RESULTS --html-single FILE`` (and ``--html DIR`` at 300). Then the file is read: its bytes,
the bytes of the traces table and of the embedded pages, how many failing traces are embedded and left out.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyze_scaling import make_templates, tracekit_command, write_corpus
from report_scale import measure, walk

ROOT = Path(__file__).resolve().parents[1]


def shape(path: Path) -> dict[str, float]:
    """Bytes of the file, of its traces table and of its embedded pages; embedded and left-out counts."""
    text = path.read_text(encoding="utf-8")
    table = text[text.index('<table class="traces">'):text.index("</table>", text.index('<table class="traces">'))]
    start = text.find('<h2 id="failing-traces">')
    embedded = text[start:text.rindex("</section>")] if start >= 0 else ""
    left = re.search(r"The pages of ([\d,]+) more failing traces are left out", text)
    return {"bytes": path.stat().st_size, "table": len(table.encode()), "embedded_bytes": len(embedded.encode()),
            "rows": table.count("<tr id="), "embedded": text.count('<section class="embedded"'),
            "left_out": int(left.group(1).replace(",", "")) if left else 0}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--large", type=int, default=10_000)
    parser.add_argument("--case", default="B2-TS-01")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "report_single.md")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="report-single-"))
    tk = tracekit_command()
    load = os.getloadavg()[0]
    small = workdir / "results-300.json"
    if not small.exists():
        subprocess.run([*tk, "analyze", str(ROOT / "recordings"), "--cases", str(ROOT / "cases"), "--no-progress",
                        "--json", str(small)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)  # fmt: skip
    large = workdir / f"results-{args.large}.json"
    if not large.exists():
        corpus = workdir / f"traces-{args.large}"
        if not corpus.exists():
            write_corpus(corpus, args.large, make_templates())
        subprocess.run([*tk, "analyze", str(corpus), "--cases", str(ROOT / "cases"), "--case", args.case,
                        "--no-progress", "--json", str(large)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)  # fmt: skip
    rows = []
    for label, results in (("300 (recordings/)", small), (f"{args.large:,} (synthetic, --case {args.case})", large)):
        for run in range(1, args.runs + 1):
            single = workdir / f"single-{results.stem}.html"
            figures = measure([*tk, "report", str(results), "--html-single", str(single)])
            rows.append(("single", label, run, figures, shape(single)))
            print(f"{label} single run {run}: {figures}", file=sys.stderr, flush=True)
        if results is small:
            for run in range(1, args.runs + 1):
                folder = workdir / "folder-300"
                shutil.rmtree(folder, ignore_errors=True)
                figures = measure([*tk, "report", str(results), "--html", str(folder)])
                walked = walk(folder)
                rows.append(("folder", label, run, figures, {"bytes": walked["bytes"], "pages": walked["pages"]}))
                print(f"{label} folder run {run}: {figures}", file=sys.stderr, flush=True)
    args.out.write_text(render(rows, load, os.getloadavg()[0], args), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


def render(rows: list, load_before: float, load_after: float, args: argparse.Namespace) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    lines = [
        "# The single-file HTML report (`--html-single`) at 300 and 10,000 traces",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()}; load average {load_before:.1f} before, {load_after:.1f} after (a shared machine). "
        f"Commit measured: `{commit.strip()}`.",
        "",
        f"Command: `python3 benchmarks/report_single.py --runs {args.runs} --large {args.large} --case {args.case}`",
        "",
        "Each row is one run of `tracekit report RESULTS --html-single FILE` (or `--html DIR`) in a fresh process.",
        "",
        "| traces | report | run | wall s | CPU s | peak RSS MB | file MB | traces table MB | rows "
        "| embedded pages | embedded MB | failing left out |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, label, run, figures, found in rows:
        if kind == "single":
            lines.append(
                f"| {label} | one file | {run} | {figures['wall']:.1f} | {figures['cpu']:.1f} | {figures['rss']:.0f} "
                f"| {found['bytes'] / 1e6:.1f} | {found['table'] / 1e6:.1f} | {found['rows']:,} "
                f"| {found['embedded']:,} | {found['embedded_bytes'] / 1e6:.1f} | {found['left_out']:,} |"
            )
        else:
            lines.append(
                f"| {label} | folder: {found['pages']:,} files | {run} | {figures['wall']:.1f} | {figures['cpu']:.1f} "
                f"| {figures['rss']:.0f} | {found['bytes'] / 1e6:.1f} | | | | | |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
