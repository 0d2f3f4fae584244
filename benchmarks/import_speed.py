"""Import speed: traces per second for ``tracekit import otel``, ``openinference`` and ``openai-agents`` on
10,000 spans of input.

The input is made by code, not by hand: the example recordings (``recordings/flawed`` and
``recordings/reference``) exported by ``tracekit export otel --with-content`` (GenAI conventions, hex ids),
copied with fresh trace ids until the file holds at least ``--spans`` spans, one OTLP document per line
(as a collector's file exporter writes them). The same spans are also written in the OpenInference shape
(``llm.input_messages.N...``, ``openinference.span.kind``) by ``to_openinference`` below, which renames the
GenAI attributes of each span. Timed: reading, mapping, session grouping and building the records
(``import_otel`` / ``import_openinference``), then writing the trace files (``write_traces``), best of
``--repeat`` runs each.

Run from the repository root::

    python benchmarks/import_speed.py --spans 10000 --repeat 3
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from tracekit.export.otel import otlp_document
from tracekit.importers import import_openai_agents, import_openinference, import_otel, write_traces
from tracekit.trace import load_trace, trace_files

ROOT = Path(__file__).resolve().parents[1]


def otel_lines(spans_wanted: int) -> tuple[list[bytes], int, int]:
    """OTLP JSON lines holding at least ``spans_wanted`` spans; with the span and trace counts."""
    traces = [load_trace(p) for p in trace_files([ROOT / "recordings" / "flawed", ROOT / "recordings" / "reference"])]
    template = otlp_document(traces, with_content=True)
    spans = template["resourceSpans"][0]["scopeSpans"][0]["spans"]
    lines, total, copies = [], 0, 0
    while total < spans_wanted:
        document = copy.deepcopy(template)
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["traceId"] = f"{copies:08x}" + span["traceId"][8:]
            for attribute in span["attributes"]:
                if attribute["key"] == "tracekit.trace_id":
                    attribute["value"]["stringValue"] += f"#{copies}"
        lines.append(orjson.dumps(document))
        total += len(spans)
        copies += 1
    return lines, total, copies * len(traces)


def to_openinference(line: bytes) -> bytes:
    """One GenAI OTLP line as OpenInference spans: chat -> LLM with flattened messages, execute_tool -> TOOL."""
    document = orjson.loads(line)
    for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        values = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
        operation = values.get("gen_ai.operation.name")
        out: dict[str, Any] = {"session.id": values.get("tracekit.trace_id")}  # on the agent span; inherited
        if operation == "chat":
            out["openinference.span.kind"] = "LLM"
            out["llm.model_name"] = values.get("gen_ai.request.model")
            out["llm.token_count.prompt"] = int(values.get("gen_ai.usage.input_tokens") or 0)
            out["llm.token_count.completion"] = int(values.get("gen_ai.usage.output_tokens") or 0)
            for prefix, key in (("llm.input_messages", "gen_ai.input.messages"), ("llm.output_messages",
                                                                                 "gen_ai.output.messages")):
                for n, message in enumerate(orjson.loads(values.get(key) or "[]")):
                    _flat_message(out, f"{prefix}.{n}.message", message)
        elif operation == "execute_tool":
            out["openinference.span.kind"] = "TOOL"
            out["tool.name"] = values.get("gen_ai.tool.name")
            out["tool_call.id"] = values.get("gen_ai.tool.call.id")
            out["input.value"] = values.get("gen_ai.tool.call.arguments")
            out["output.value"] = values.get("gen_ai.tool.call.result")
        else:
            out["openinference.span.kind"] = "AGENT"
        span["attributes"] = [{"key": k, "value": {"intValue" if isinstance(v, int) else "stringValue": v}}
                              for k, v in out.items() if v is not None]
    return orjson.dumps(document)


def _flat_message(out: dict[str, Any], prefix: str, message: dict[str, Any]) -> None:
    out[f"{prefix}.role"] = message["role"]
    texts = [p.get("content", "") for p in message.get("parts", []) if p.get("type") == "text"]
    if texts:
        out[f"{prefix}.content"] = "".join(texts)
    calls = [p for p in message.get("parts", []) if p.get("type") == "tool_call"]
    for m, call in enumerate(calls):
        out[f"{prefix}.tool_calls.{m}.tool_call.id"] = call.get("id")
        out[f"{prefix}.tool_calls.{m}.tool_call.function.name"] = call.get("name")
        out[f"{prefix}.tool_calls.{m}.tool_call.function.arguments"] = orjson.dumps(call.get("arguments")).decode()
    responses = [p for p in message.get("parts", []) if p.get("type") == "tool_call_response"]
    if responses:
        out[f"{prefix}.tool_call_id"] = responses[0].get("id")
        out[f"{prefix}.content"] = responses[0].get("response")


def to_agents_export(line: bytes) -> bytes:
    """One GenAI OTLP line as the Agents SDK's export: invoke_agent -> trace and agent span, chat ->
    generation (chat messages in and out, usage), execute_tool -> function (JSON arguments, output)."""
    document = orjson.loads(line)
    items: list[dict[str, Any]] = []
    for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        values = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
        operation = values.get("gen_ai.operation.name")
        times = {"started_at": _iso(span["startTimeUnixNano"]), "ended_at": _iso(span["endTimeUnixNano"])}
        common = {"object": "trace.span", "id": f"span_{span['spanId']}", "trace_id": f"trace_{span['traceId']}",
                  "parent_id": None, **times, "error": None}  # fmt: skip
        if operation == "invoke_agent":
            items.append({"object": "trace", "id": common["trace_id"], "workflow_name": "Agent workflow",
                          "group_id": values.get("gen_ai.conversation.id"), "metadata": None})  # fmt: skip
            items.append({**common, "span_data": {"type": "agent", "name": values.get("gen_ai.agent.name")}})
        elif operation == "chat":
            system = orjson.loads(values.get("gen_ai.system_instructions") or "[]")
            chat = [{"role": "system", "content": "".join(p.get("content", "") for p in system)}] if system else []
            for message in orjson.loads(values.get("gen_ai.input.messages") or "[]"):
                chat.extend(_chat_messages(message))
            output = [m for message in orjson.loads(values.get("gen_ai.output.messages") or "[]")
                      for m in _chat_messages(message)]  # fmt: skip
            usage = {"input_tokens": int(values.get("gen_ai.usage.input_tokens") or 0),
                     "output_tokens": int(values.get("gen_ai.usage.output_tokens") or 0)}  # fmt: skip
            model = values.get("gen_ai.request.model")
            items.append({**common, "span_data": {"type": "generation", "input": chat, "output": output,
                                                  "model": model, "usage": usage}})  # fmt: skip
        elif operation == "execute_tool":
            items.append({**common, "span_data": {"type": "function", "name": values.get("gen_ai.tool.name"),
                                                  "input": values.get("gen_ai.tool.call.arguments"),
                                                  "output": values.get("gen_ai.tool.call.result")}})  # fmt: skip
    return orjson.dumps({"data": items})


def _chat_messages(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One GenAI role/parts message as chat messages (a tool message per tool_call_response part)."""
    parts = message.get("parts", [])
    if message["role"] == "tool" or any(p.get("type") == "tool_call_response" for p in parts):
        return [{"role": "tool", "tool_call_id": p.get("id"), "content": p.get("response")}
                for p in parts if p.get("type") == "tool_call_response"]  # fmt: skip
    text = "".join(p.get("content", "") for p in parts if p.get("type") == "text")
    chat: dict[str, Any] = {"role": message["role"], "content": text}
    calls = [{"id": p.get("id"), "type": "function",
              "function": {"name": p.get("name"), "arguments": orjson.dumps(p.get("arguments")).decode()}}
             for p in parts if p.get("type") == "tool_call"]  # fmt: skip
    if calls:
        chat["tool_calls"] = calls
    return [chat]


def _iso(nanoseconds: str | int) -> str:
    moment = dt.datetime.fromtimestamp(int(nanoseconds) / 1e9, dt.timezone.utc)
    return moment.isoformat(timespec="microseconds")


def timed(run: Callable[[list[str]], list[Any]], repeat: int, scratch: Path) -> tuple[float, float, int]:
    """Best seconds to import and to import + write, and the number of traces."""
    best_import = best_total = float("inf")
    count = 0
    for _ in range(repeat):
        out = scratch / "out"
        shutil.rmtree(out, ignore_errors=True)
        problems: list[str] = []
        start = time.perf_counter()
        traces = run(problems)
        middle = time.perf_counter()
        write_traces(traces, out)
        end = time.perf_counter()
        assert not problems, problems[:3]
        count = len(traces)
        best_import, best_total = min(best_import, middle - start), min(best_total, end - start)
    return best_import, best_total, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--spans", type=int, default=10_000, help="spans of input, at least (default 10000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each importer; the best is kept")
    args = parser.parse_args()
    lines, spans, traces = otel_lines(args.spans)
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        otel_file, oi_file = scratch / "otel.jsonl", scratch / "openinference.jsonl"
        agents_file = scratch / "openai-agents.jsonl"
        otel_file.write_bytes(b"\n".join(lines) + b"\n")
        oi_file.write_bytes(b"\n".join(to_openinference(line) for line in lines) + b"\n")
        agents_file.write_bytes(b"\n".join(to_agents_export(line) for line in lines) + b"\n")
        print(f"input: {spans} spans, {traces} sessions; otel {otel_file.stat().st_size / 1e6:.1f} MB, "
              f"openinference {oi_file.stat().st_size / 1e6:.1f} MB, "
              f"openai-agents {agents_file.stat().st_size / 1e6:.1f} MB")
        print(f"python {platform.python_version()}, {platform.machine()}")
        print("| importer | traces | import s | traces/s | spans/s | import + write s | traces/s with write |")
        print("|---|---|---|---|---|---|---|")
        for name, run in (("otel", lambda p: import_otel([otel_file], p)),
                          ("openinference", lambda p: import_openinference([oi_file], p)),
                          ("openai-agents", lambda p: import_openai_agents([agents_file], p))):
            seconds, total, count = timed(run, args.repeat, scratch)
            print(f"| {name} | {count} | {seconds:.2f} | {count / seconds:.0f} | {spans / seconds:.0f} "
                  f"| {total:.2f} | {count / total:.0f} |")


if __name__ == "__main__":
    main()
