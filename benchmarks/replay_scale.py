"""``tracekit replay`` at scale (issue 20): start-up, memory per exchange, hit and miss latency.

The recordings are made with tracekit's own writers (``TraceBuilder`` and ``write_trace``), shaped as the
proxy writes them: ``--sessions`` sessions of ``--calls`` model calls each (default 2,000 x 10 = 20,000
exchanges), every request carrying the whole conversation so far (system prompt, two tools, the user's
question, then tool_use / tool_result turns), JSON responses with usage and response headers. Sessions
alternate between the Anthropic Messages API and OpenAI chat completions and between four models, so the
index sees two routes and eight (route, model) groups; the canonical conversation of each request is
derived by the provider modules, as the proxy does.

Then ``tracekit replay DIR --port 0`` runs as a subprocess (this interpreter's ``tracekit`` entry point):

- start-up: from ``Popen`` to the first ``GET /_tracekit/health`` answered 200 (after the announce line); the
  recordings load in the background (``tracekit.proxy.loading``), so health may say ``loading``, which is
  noted;
- first answer: from ``Popen`` to the answer of a recorded request sent right after that health answer (it
  waits for the load when the load is still under way, and must be a hit);
- memory: the replay process's RSS once it gave that first answer (the load done), minus the RSS of the
  same command over a folder holding one one-call trace (the interpreter, the imports, the server), minus
  the stored bodies (the request and response JSON of every model call, as written), divided by the
  exchanges; peak (VmHWM) too;
- hit latency: recorded requests sent again (round-robin over sampled recordings) over one keep-alive
  connection; a hit must answer 200 with ``x-tracekit-replay: hit``;
- the load itself: ``ReplayIndex.load`` of the folder in a fresh interpreter, wall and CPU time, with the
  replay reader (what ``tracekit replay`` uses) and with every file read into the record models
  (``fast=False``, the load before the replay reader), interleaved, twice each;
- the import floor: ``python -c pass``, the imports ``tracekit replay`` makes before it serves
  (``tracekit.cli.main``, the command and the proxy's ``launch``), and those of the proxy it builds in the
  background (``tracekit.proxy.server``), each in a fresh interpreter, best of three;
- miss latency, two kinds: *late* (the last tool result of a recorded request changed: the nearest
  recording shares all but the last message) and *new* (a first user message never recorded: nothing is
  shared, every recording of the route and model is as near). A miss must answer 404 with
  ``x-tracekit-replay: miss`` naming the nearest recording.

``--paired N --base-src DIR`` also starts ``tracekit replay`` N times over the same recordings from this
code and from DIR (an export of an earlier commit, run as ``python -m tracekit`` with ``PYTHONPATH=DIR``),
alternating, and gives the medians of both: wall time to health 200, the CPU time the replay process had
used by then (user + system, ``/proc/PID/stat``: what the start-up cost whatever else the machine runs) and
the time to the first answer. On a shared machine the pairs see the same load.

Usage::

    python benchmarks/replay_scale.py [--sessions 2000] [--calls 10] [--requests 300] [--out RUN.md]
        [--paired 5 --base-src DIR]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from tracekit.providers import PROVIDERS
from tracekit.proxy.keys import request_key
from tracekit.trace import Header, ModelCall, Usage
from tracekit.trace.builder import TraceBuilder
from tracekit.trace.io import write_trace

MODELS = ("claude-bench-a", "claude-bench-b", "gpt-bench-a", "gpt-bench-b")
SYSTEM = "你是一个旅行助手。回答之前先查询天气和航班，用中文回答，给出简短的建议。" * 3
CITIES = ("北京", "上海", "广州", "深圳", "杭州", "成都", "西安", "南京", "武汉", "重庆")
ANTHROPIC_TOOLS = [
    {"name": "get_weather", "description": "查询城市天气", "input_schema": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "search_flights", "description": "查询航班", "input_schema": {
        "type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}}}},
]  # fmt: skip
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]},
    }
    for t in ANTHROPIC_TOOLS
]
FINAL = "天气晴好，建议上午出发，带上防晒用品。"


def _question(session: int) -> str:
    return f"第 {session} 位用户：我想去{CITIES[session % 10]}，帮我看看天气和航班。"


def _city(session: int, step: int) -> dict[str, str]:
    return {"city": CITIES[(session + step) % 10]}


def _result(session: int, step: int) -> str:
    return f"{CITIES[(session + step) % 10]}：晴，{20 + step} 度"


def _anthropic_step(session: int, step: int) -> dict[str, Any]:
    use = {"type": "tool_use", "id": f"toolu_{session}_{step}", "name": "get_weather", "input": _city(session, step)}
    return {"role": "assistant", "content": [{"type": "text", "text": f"我先查一下第 {step} 项。"}, use]}


def _openai_step(session: int, step: int) -> dict[str, Any]:
    arguments = json.dumps(_city(session, step), ensure_ascii=False)
    use = {
        "id": f"call_{session}_{step}",
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    return {"role": "assistant", "content": f"我先查一下第 {step} 项。", "tool_calls": [use]}


def _anthropic_turn(session: int, call: int, calls: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``call``-th request of an Anthropic session (whole history) and its response."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": _question(session)}]
    for step in range(call):
        result = {"type": "tool_result", "tool_use_id": f"toolu_{session}_{step}", "content": _result(session, step)}
        messages += [_anthropic_step(session, step), {"role": "user", "content": [result]}]
    model = MODELS[session % 2]
    request = {"model": model, "max_tokens": 1024, "system": SYSTEM, "tools": ANTHROPIC_TOOLS, "messages": messages}
    last = call + 1 == calls
    content = [{"type": "text", "text": FINAL}] if last else _anthropic_step(session, call)["content"]
    usage = {"input_tokens": 300 + 40 * call, "output_tokens": 30}
    stop = "end_turn" if last else "tool_use"
    response = {"id": f"msg_{session}_{call}", "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}  # fmt: skip
    return request, response


def _openai_turn(session: int, call: int, calls: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``call``-th request of an OpenAI chat completions session (whole history) and its response."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": _question(session)},
    ]
    for step in range(call):
        result = {"role": "tool", "tool_call_id": f"call_{session}_{step}", "content": _result(session, step)}
        messages += [_openai_step(session, step), result]
    model = MODELS[2 + session % 2]
    request = {"model": model, "max_tokens": 1024, "tools": OPENAI_TOOLS, "messages": messages}
    last = call + 1 == calls
    message = {"role": "assistant", "content": FINAL} if last else _openai_step(session, call)
    usage = {"prompt_tokens": 300 + 40 * call, "completion_tokens": 30, "total_tokens": 330 + 40 * call}
    choice = {"index": 0, "message": message, "finish_reason": "stop" if last else "tool_calls"}
    response = {"id": f"chatcmpl-{session}-{call}", "object": "chat.completion", "created": 1775520000, "model": model,
                "choices": [choice], "usage": usage}  # fmt: skip
    return request, response


def turn(session: int, call: int, calls: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(provider, request, response) of one recorded exchange."""
    if session % 4 < 2:
        return ("anthropic", *_anthropic_turn(session, call, calls))
    return ("openai", *_openai_turn(session, call, calls))


def write_recordings(folder: Path, sessions: int, calls: int) -> int:
    """Write ``sessions`` trace files of ``calls`` model calls; returns the bytes of the stored bodies."""
    bodies = 0
    for session in range(sessions):
        name = turn(session, 0, calls)[0]
        provider = PROVIDERS[name]
        builder = TraceBuilder(Header(trace_id=f"bench-{session}", source="proxy", provider=name,
                                      model=turn(session, 0, calls)[1]["model"]))  # fmt: skip
        for call in range(calls):
            _, request, response = turn(session, call, calls)
            system, messages = provider.request_conversation(request)
            builder.add_conversation(messages, system)
            reply, _meta = provider.response_to_canonical(response)
            usage = response["usage"]
            record = ModelCall(
                index=0, provider=name, model=request["model"], status=200, request=request,
                request_key=request_key(provider.ROUTE, request), response=response,
                usage=Usage(input_tokens=usage.get("input_tokens", usage.get("prompt_tokens")),
                            output_tokens=usage.get("output_tokens", usage.get("completion_tokens"))),
                latency_ms=120.0, ttft_ms=80.0, response_headers={"content-type": "application/json"},
                stitched="new" if call == 0 else "continuity",
            )  # fmt: skip
            builder.add_model_call(record, reply)
            bodies += len(orjson.dumps(request)) + len(orjson.dumps(response))
        write_trace(folder / f"session-{session:05d}.jsonl", builder.records)
    return bodies


def rss_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in kB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def paired(folder: Path, early: tuple[str, bytes], base: Path, count: int) -> str:
    """Start-up of this code and of ``base``, alternating ``count`` times each (see the module docstring)."""
    runs: dict[str, list[Replay]] = {"this code": [], f"base ({base.name})": []}
    for number in range(count):
        for name in (list(runs) if number % 2 == 0 else list(reversed(runs))):
            replay = Replay(folder, early, None if name == "this code" else base)
            replay.close()
            runs[name].append(replay)
    lines = ["| code | start-up, wall (median, range) | CPU by health (median) | first answer (median) | health said |",
             "|---|---|---|---|---|"]  # fmt: skip
    for name, replays in runs.items():
        walls = [r.startup_s for r in replays]
        lines.append(
            f"| {name} | {statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f}) | "
            f"{statistics.median(r.startup_cpu_s for r in replays):.2f} s | "
            f"{statistics.median(r.first_answer_s for r in replays):.2f} s | "
            f"{', '.join(sorted({r.health for r in replays}))} |"
        )
    return "\n".join(lines) + "\n"


class Replay:
    """``tracekit replay FOLDER --port 0`` as a subprocess, with its start-up time."""

    def __init__(self, folder: Path, early: tuple[str, bytes], source: Path | None = None) -> None:
        command = [str(Path(sys.executable).with_name("tracekit")), "replay", str(folder), "--port", "0"]
        environment = None
        if source is not None:  # an earlier commit's tree
            command = [sys.executable, "-m", "tracekit", *command[1:]]
            environment = {**os.environ, "PYTHONPATH": str(source)}
        started = time.perf_counter()
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                        env=environment, cwd=source)  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # "tracekit replay: listening on http://127.0.0.1:PORT"
        if "listening on" not in line:
            self.process.kill()
            raise SystemExit(f"tracekit replay did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1].strip().rstrip("/"))
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        status, _, said = self.get("/_tracekit/health")
        self.startup_s = time.perf_counter() - started
        self.startup_cpu_s = cpu_s(self.process.pid)
        if status != 200:
            raise SystemExit(f"health answered {status}")
        self.health = orjson.loads(said)["status"]
        _, status, headers, data = self.post(*early)
        self.first_answer_s = time.perf_counter() - started
        if (status, headers.get("x-tracekit-replay")) != (200, "hit"):
            raise SystemExit(f"the first request was answered {status}: {data[:300]!r}")

    def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        self.connection.request("GET", path)
        response = self.connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()

    def post(self, route: str, body: bytes) -> tuple[float, int, dict[str, str], bytes]:
        started = time.perf_counter()
        self.connection.request("POST", route, body=body, headers={
            "content-type": "application/json", "x-api-key": "k", "authorization": "Bearer k"})  # fmt: skip
        response = self.connection.getresponse()
        data = response.read()
        elapsed = (time.perf_counter() - started) * 1000
        return elapsed, response.status, {k.lower(): v for k, v in response.getheaders()}, data

    def close(self) -> None:
        self.connection.close()
        self.process.terminate()
        self.process.wait(timeout=30)


LOAD = """
import sys, time
from tracekit.proxy.replayer import ReplayIndex
wall, cpu = time.perf_counter(), time.process_time()
index = ReplayIndex.load(sys.argv[1], fast=sys.argv[2] == "fast")
print(time.perf_counter() - wall, time.process_time() - cpu, len(index))
"""
IMPORTS = "import tracekit.cli.main, tracekit.cli.replay, tracekit.proxy.launch"
BUILD_IMPORTS = "import tracekit.proxy.server"


def load_times(folder: Path, reader: str) -> tuple[float, float]:
    """(wall, CPU) seconds of ``ReplayIndex.load(folder)`` in a fresh interpreter (``reader``: fast / models)."""
    output = subprocess.run([sys.executable, "-c", LOAD, str(folder), reader], check=True, capture_output=True,
                            text=True).stdout.split()  # fmt: skip
    return float(output[0]), float(output[1])


def interpreter_s(code: str) -> float:
    """The best of three wall times of ``python -c code`` in a fresh interpreter."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - started)
    return min(times)


def late_miss(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` with its last message's text changed (the nearest recording shares everything before)."""
    messages = [*request["messages"]]
    last = dict(messages[-1])
    if isinstance(last.get("content"), list):
        last["content"] = [{**last["content"][0], "content": "暴雨，航班取消"}]
    else:
        last["content"] = "暴雨，航班取消"
    messages[-1] = last
    return {**request, "messages": messages}


def new_miss(request: dict[str, Any], number: int) -> dict[str, Any]:
    """``request`` starting a conversation never recorded (nothing shared with any recording)."""
    first = 1 if request["messages"][0]["role"] == "system" else 0
    messages = [*request["messages"]]
    messages[first] = {"role": "user", "content": f"一个从未录过的问题 {number}"}
    return {**request, "messages": messages[: first + 1]}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def measure(replay: Replay, samples: list[tuple[str, dict[str, Any]]], kind: str, requests: int) -> list[float]:
    """Latencies (ms) of ``requests`` requests of ``kind`` (hit / late miss / new miss), checked."""
    times = []
    for number in range(requests):
        name, request = samples[number % len(samples)]
        body = request if kind == "hit" else late_miss(request) if kind == "late miss" else new_miss(request, number)
        elapsed, status, headers, data = replay.post(PROVIDERS[name].ROUTE, orjson.dumps(body))
        expected = (200, "hit") if kind == "hit" else (404, "miss")
        if (status, headers.get("x-tracekit-replay")) != expected:
            raise SystemExit(f"{kind}: answered {status} {headers.get('x-tracekit-replay')}: {data[:300]!r}")
        if kind != "hit" and b"Nearest recorded request" not in data:
            raise SystemExit(f"{kind}: the miss names no nearest recording: {data[:300]!r}")
        times.append(elapsed)
    return times


def run(sessions: int, calls: int, requests: int, pairs: int = 0, base: Path | None = None) -> str:
    exchanges = sessions * calls
    with tempfile.TemporaryDirectory(prefix="replay-scale-") as temp:
        big, small = Path(temp) / "big", Path(temp) / "small"
        big.mkdir()
        small.mkdir()
        started = time.perf_counter()
        bodies = write_recordings(big, sessions, calls)
        written_s = time.perf_counter() - started
        write_recordings(small, 1, 1)
        on_disk = sum(path.stat().st_size for path in big.iterdir())

        step = max(1, exchanges // 97)
        samples = []
        for number in range(0, exchanges, step):
            name, request, _ = turn(number // calls, number % calls, calls)
            samples.append((name, request))
        name, request, _ = turn(0, 0, 1)
        baseline = Replay(small, (PROVIDERS[name].ROUTE, orjson.dumps(request)))
        base_rss, base_hwm = rss_kb(baseline.process.pid)
        baseline.close()

        name, request = samples[-1]  # (the last file listed: read last by the load)
        replay = Replay(big, (PROVIDERS[name].ROUTE, orjson.dumps(request)))
        rss, hwm = rss_kb(replay.process.pid)
        warm = min(20, requests)
        results: dict[str, list[float]] = {}
        for kind in ("hit", "late miss", "new miss"):
            measure(replay, samples, kind, warm)
            results[kind] = measure(replay, samples, kind, requests)
        rss_after, hwm_after = rss_kb(replay.process.pid)
        replay.close()
        compared = ""
        if pairs and base is not None:
            compared = paired(big, (PROVIDERS[name].ROUTE, orjson.dumps(request)), base, pairs)

        loads: dict[str, list[tuple[float, float]]] = {"fast": [], "models": []}
        for _ in range(2):
            for reader in loads:
                loads[reader].append(load_times(big, reader))
        bare_s, imports_s, build_s = interpreter_s("pass"), interpreter_s(IMPORTS), interpreter_s(BUILD_IMPORTS)

    fast_loads, model_loads = (", ".join(f"{wall:.2f} / {cpu:.2f} s" for wall, cpu in loads[reader])
                               for reader in ("fast", "models"))  # fmt: skip
    per_exchange = ((rss - base_rss) * 1024 - bodies) / exchanges
    peak_per_exchange = ((hwm - base_hwm) * 1024 - bodies) / exchanges
    load = os.getloadavg()[0]
    lines = [
        f"Machine: {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPUs; "
        f"load average (1 min) {load:.2f} at the end.",
        f"Recordings: {sessions} sessions x {calls} calls = {exchanges} exchanges in {sessions} trace files, "
        f"{on_disk / 1e6:.1f} MB on disk, stored bodies (request + response JSON) {bodies / 1e6:.1f} MB "
        f"({bodies / exchanges / 1024:.2f} kB per exchange); written in {written_s:.1f} s.",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| **start-up** (Popen to health 200; health said `{replay.health}`) | **{replay.startup_s:.2f} s** "
        f"(one-trace folder: {baseline.startup_s:.2f} s, `{baseline.health}`) | <= 0.5 s |",
        f"| CPU the replay process had used by health 200 (user + system) | {replay.startup_cpu_s:.2f} s "
        f"(one-trace folder: {baseline.startup_cpu_s:.2f} s) | |",
        f"| first answer (Popen to a recorded request sent right after health, answered: it waits for the load) "
        f"| {replay.first_answer_s:.2f} s (one-trace folder: {baseline.first_answer_s:.2f} s) | |",
        f"| the load itself (`ReplayIndex.load`, fresh interpreter), wall / CPU, two runs | {fast_loads} | |",
        f"| the same with every file read into the record models (`fast=False`: the load before) | {model_loads} | |",
        f"| import floor: `python -c pass` / the imports of `tracekit replay` before it serves (`{IMPORTS}`) / "
        f"those of the proxy built in the background (`{BUILD_IMPORTS}`), best of 3 | "
        f"{bare_s:.2f} / {imports_s:.2f} / {build_s:.2f} s | |",
        f"| RSS after load (after the first answer) | {rss / 1024:.1f} MB "
        f"(one-trace folder: {base_rss / 1024:.1f} MB) | |",
        f"| **memory per exchange beyond the bodies** (RSS) | **{per_exchange / 1024:.2f} kB** | <= 2 kB |",
        f"| peak (VmHWM) per exchange beyond the bodies | {peak_per_exchange / 1024:.2f} kB | |",
        f"| RSS after the requests | {rss_after / 1024:.1f} MB (peak {hwm_after / 1024:.1f} MB) | |",
    ]
    for kind, times in results.items():
        target = "<= 5 ms" if "miss" in kind else ""
        lines.append(f"| {kind}: median / p99 / max over {len(times)} | **{statistics.median(times):.2f}** / "
                     f"{percentile(times, 0.99):.2f} / {max(times):.2f} ms | {target} |")  # fmt: skip
    if compared:
        lines += ["", f"Start-up, paired with the base code over the same recordings ({pairs} each, alternating):", "",
                  compared]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=10, help="Model calls per session.")
    parser.add_argument("--requests", type=int, default=300, help="Measured requests of each kind.")
    parser.add_argument("--out", type=Path, help="Write the results as Markdown here.")
    parser.add_argument("--paired", type=int, default=0, metavar="N", help="Start-ups paired with --base-src.")
    parser.add_argument("--base-src", type=Path, metavar="DIR", help="An export of the commit to compare with.")
    args = parser.parse_args()
    text = run(args.sessions, args.calls, args.requests, args.paired, args.base_src)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
