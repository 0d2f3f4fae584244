"""Import inspect_ai evaluation logs (``.eval`` and ``.json``) as tracekit traces: one per sample and epoch.

inspect_ai is not needed: the log is read as data. Facts of the format (UKGovernmentBEIS/inspect_ai,
``src/inspect_ai/log/_recorders/eval.py`` and ``log/_log.py``, as written by 0.3.x):

- ``.eval`` is a zip: ``header.json`` (``eval``: task, model, ids; or, while a run is going on,
  ``_journal/start.json``), ``samples/{id}_epoch_{n}.json`` (one ``EvalSample`` each), summaries. Its
  entries are zstd-compressed (zip method 93), which ``zipfile`` of Python 3.10 to 3.13 cannot read, so
  the entries are read here: the central directory by ``zipfile``, the data by ``zstandard``, checked
  against the entry's CRC-32.
- ``.json`` is the whole ``EvalLog``: ``eval`` and ``samples``.
- A sample holds the final ``messages`` (system, user, assistant with ``tool_calls``, tool with
  ``tool_call_id`` and ``error``), ``scores``, and ``events``; each ``model`` event is one model call
  (``input`` or, condensed, ``input_refs`` ranges into ``events_data.messages``; ``output.choices[0]``,
  ``output.usage``, ``timestamp``, ``working_time``, ``error``).

Each model event adds its input and reply to a ``TraceBuilder`` as the proxy adds a request and its
response; the sample's final messages then add what followed the last call. ``meta`` carries the task,
sample id, epoch, target and scores.

A hostile ``.eval`` is read within bounds (``eval_zip``). A bad entry is a problem of that entry, a bad
file one of that file: the other files of the batch are still imported.
"""

from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from tracekit.importers.common import (
    DATA_ERRORS,
    TOO_DEEP,
    ImportedTrace,
    describe,
    input_files,
    new_header,
    too_deep,
    unique_ids,
)
from tracekit.importers.eval_zip import MAX_LOG_BYTES, ZIP_ERRORS, entry_json, overlapping
from tracekit.providers import openai
from tracekit.trace import Content, ModelCall, TraceBuilder, Usage

SOURCE = "import:inspect"
SUFFIXES = (".eval", ".json")


def import_inspect(paths: Iterable[str | Path], problems: list[str]) -> list[ImportedTrace]:
    """One trace per sample and epoch of the inspect_ai logs in ``paths``; unreadable parts go to ``problems``."""
    traces: list[ImportedTrace] = []
    names: list[str] = []
    for path in input_files(paths, SUFFIXES, problems):
        samples = _samples(path, problems)
        while True:
            try:
                eval_info, where, sample = next(samples)
            except StopIteration:
                break
            except (*ZIP_ERRORS, *DATA_ERRORS) as exc:  # the file itself: its samples read so far are kept
                problems.append(f"{path}: not a readable inspect_ai log: {describe(exc)}; the rest of it skipped")
                break
            try:
                trace = sample_trace(eval_info, sample, where)
            except DATA_ERRORS as exc:
                problems.append(f"{where}: not an inspect_ai sample ({describe(exc)}); skipped")
                continue
            trace.origin = where
            traces.append(trace)
            names.append(trace.trace_id)
    return [ImportedTrace(stem, trace.records, origin=trace.origin)
            for trace, stem in zip(traces, unique_ids(names), strict=True)]


# --------------------------------------------------------------------------- reading the log


def _samples(path: Path, problems: list[str]) -> Iterator[tuple[dict[str, Any], str, dict[str, Any]]]:
    """``(eval, where, sample)`` for every readable sample of one log file."""
    if zipfile.is_zipfile(path):
        yield from _zip_samples(path, problems)
        return
    try:
        log = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        problems.append(f"{path}: neither an .eval zip nor JSON: {exc}")
        return
    if too_deep(log):
        problems.append(f"{path}: {TOO_DEEP}")
        return
    if not isinstance(log, dict) or not isinstance(log.get("samples", []), list):
        problems.append(f"{path}: not an inspect_ai log (expected an object with eval and samples)")
        return
    eval_info: dict[str, Any] = log["eval"] if isinstance(log.get("eval"), dict) else {}
    if not log.get("samples"):
        problems.append(f"{path}: the log holds no samples (written with --no-log-samples?)")
    for number, sample in enumerate(log.get("samples") or []):
        if isinstance(sample, dict):
            yield eval_info, f"{path}: samples[{number}]", sample
        else:
            problems.append(f"{path}: samples[{number}]: expected a sample object")


def _zip_samples(path: Path, problems: list[str]) -> Iterator[tuple[dict[str, Any], str, dict[str, Any]]]:
    try:
        archive = zipfile.ZipFile(path)
    except (*ZIP_ERRORS, ValueError) as exc:
        problems.append(f"{path}: not a readable .eval zip: {describe(exc)}")
        return
    with archive, open(path, "rb") as raw:
        entries = {info.filename: info for info in archive.infolist()}
        overlap = overlapping(archive.infolist())
        if overlap:
            problems.append(f"{path}: entries {overlap} overlap in the file (a zip bomb?); refused")
            return
        budget = [MAX_LOG_BYTES]

        def readable(names: Iterable[str]) -> Iterator[tuple[str, Any]]:
            """The JSON of each entry in ``names`` that can be read; the others are noted and skipped."""
            for name in names:
                try:
                    yield name, entry_json(archive, raw, entries[name], budget)
                except (*ZIP_ERRORS, ValueError) as exc:
                    problems.append(f"{path}:{name}: unreadable ({describe(exc)}); skipped")

        eval_info: dict[str, Any] = {}
        for name, header in readable(n for n in ("header.json", "_journal/start.json") if n in entries):
            if isinstance(header, dict) and isinstance(header.get("eval"), dict):
                eval_info = header["eval"]
                break
            problems.append(f"{path}:{name}: eval: expected an object (the task and model); left out")
        sample_names = sorted((n for n in entries if n.startswith("samples/") and n.endswith(".json")), key=_sample_key)
        if not sample_names:
            problems.append(f"{path}: the log holds no samples")
        for name, sample in readable(sample_names):
            if not isinstance(sample, dict):
                problems.append(f"{path}:{name}: expected a sample object; skipped")
                continue
            yield eval_info, f"{path}:{name}", sample


def _sample_key(name: str) -> tuple[int, str]:
    stem = name.removeprefix("samples/").removesuffix(".json")
    _, _, epoch = stem.rpartition("_epoch_")
    return (int(epoch) if epoch.isdigit() else 0, stem)


# --------------------------------------------------------------------------- one sample


def sample_trace(eval_info: dict[str, Any], sample: dict[str, Any], where: str) -> ImportedTrace:
    """The records of one sample: each model event as a model call with its input and reply."""
    problems: list[str] = []
    sample = _resolved(sample, problems, where)
    task = str(eval_info.get("task") or "task")
    sample_id, epoch = sample["id"], int(sample.get("epoch") or 1)
    trace_id = f"{task}-{sample_id}-epoch{epoch}"
    model = eval_info.get("model")
    meta: dict[str, Any] = {
        "task": task, "sample_id": sample_id, "epoch": epoch, "target": sample.get("target"),
        "scores": sample.get("scores") or {}, "eval_id": eval_info.get("eval_id"), "run_id": eval_info.get("run_id"),
        "log": where,
    }
    if sample.get("error"):
        error = sample["error"]
        message = error.get("message") if isinstance(error, dict) else error
        problems.append(f"{where}: the sample ended in an error: {message}")
    provider = str(model).split("/", 1)[0] if model else None
    header = new_header(trace_id, SOURCE, provider=provider, model=model, meta=meta)
    builder = TraceBuilder(header)
    pool = (sample.get("events_data") or {}).get("messages") or []
    unmapped: set[str] = set()
    model_events = [event for event in sample.get("events") or [] if event.get("event") == "model"]
    for number, event in enumerate(model_events):
        moment = _time(event.get("timestamp"))
        system, messages = chat_conversation(_event_input(event, pool), unmapped)
        builder.add_conversation(messages, system, timestamp=moment)
        output = event.get("output") or {}
        choices = output.get("choices") or []
        reply = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
        error = event.get("error")
        call = ModelCall(
            index=number,
            provider=provider or "unknown",
            model=output.get("model") or event.get("model"),
            usage=_usage(output.get("usage")),
            stop_reason=choices[0].get("stop_reason") if choices else None,
            latency_ms=event["working_time"] * 1000 if isinstance(event.get("working_time"), (int, float)) else None,
            error={"message": str(error)} if error else None,
            t=moment,
        )
        builder.add_model_call(call, chat_conversation([reply], unmapped)[1][0] if isinstance(reply, dict) else None)
    if not model_events:
        problems.append(f"{where}: no model events (events not logged); model calls are counted from the replies")
    system, messages = chat_conversation(sample.get("messages") or [], unmapped)
    builder.add_conversation(messages, system, timestamp=_time(sample.get("completed_at")))
    if unmapped:
        problems.append(f"{where}: message content of type {', '.join(sorted(unmapped))} not mapped (left out)")
    if problems:
        header.meta["problems"] = problems  # the header holds a copy of ``meta``
    return ImportedTrace(trace_id, builder.records)


def _resolved(sample: dict[str, Any], problems: list[str], where: str) -> dict[str, Any]:
    """The sample with its ``attachment://<hash>`` references replaced by the text they stand for.

    inspect_ai condenses a sample before writing it: every string of an event longer than 100 characters,
    and images in messages, move to ``attachments`` (``log/_condense.py``); a reference is the whole string
    (``tc://`` in older logs). A reference without its attachment is left as it is and named in ``problems``.
    """
    attachments = sample.get("attachments")
    table: dict[str, Any] = attachments if isinstance(attachments, dict) else {}
    missing: set[str] = set()

    def resolve(value: Any) -> Any:
        if isinstance(value, str):
            for protocol in ("attachment://", "tc://"):
                if value.startswith(protocol):
                    key = value[len(protocol):]
                    if isinstance(table.get(key), str):
                        return table[key]
                    missing.add(key)
            return value
        if isinstance(value, list):
            return [resolve(item) for item in value]
        if isinstance(value, dict):
            return {key: resolve(item) for key, item in value.items()}
        return value

    resolved = {key: value if key == "attachments" else resolve(value) for key, value in sample.items()}
    if missing:
        problems.append(f"{where}: {len(missing)} attachment reference(s) without their attachment, kept as they are")
    return resolved


def chat_conversation(
    messages: list[Any], unmapped: set[str] | None = None
) -> tuple[Content | None, list[dict[str, Any]]]:
    """inspect_ai ``ChatMessage`` dicts as ``(system, canonical messages)`` (via the OpenAI chat shape:
    inspect's messages are that shape with ``function`` for the tool name and an ``error`` on tool results).
    The types of content parts that have no canonical form (audio, video, data, ...) are added to ``unmapped``."""
    unmapped = set() if unmapped is None else unmapped
    chat = [_chat_message(message, unmapped) for message in messages if isinstance(message, dict)]
    system, canonical = openai.request_conversation({"messages": chat})
    errors = {m["tool_call_id"] for m in chat if m.get("role") == "tool" and m.get("_error")}
    for message in canonical:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and block.get("tool_use_id") in errors:
                block["is_error"] = True
    return system, canonical


def _chat_message(message: dict[str, Any], unmapped: set[str]) -> dict[str, Any]:
    role = message.get("role")
    chat: dict[str, Any] = {"role": role, "content": _content(message.get("content"), unmapped)}
    if role == "assistant":
        content = message.get("content")
        parts: list[Any] = content if isinstance(content, list) else []
        reasoning = [p.get("reasoning") for p in parts if isinstance(p, dict) and p.get("type") == "reasoning"]
        if reasoning:
            chat["reasoning_content"] = "\n".join(str(r) for r in reasoning if r)
        calls = [
            {"id": call.get("id"), "type": "function",
             "function": {"name": call.get("function") or "", "arguments": call.get("arguments")}}
            for call in message.get("tool_calls") or [] if isinstance(call, dict)
        ]
        if calls:
            chat["tool_calls"] = calls
    elif role == "tool":
        chat["tool_call_id"] = message.get("tool_call_id")
        chat["name"] = message.get("function")
        error = message.get("error")
        if error:
            chat["_error"] = True
            if not chat["content"]:
                chat["content"] = error.get("message", "") if isinstance(error, dict) else str(error)
    return chat


def _content(content: Any, unmapped: set[str]) -> Any:
    """inspect content (a string, or text / image / reasoning parts) as OpenAI chat content; the types of
    other parts go to ``unmapped`` (reasoning is read apart, from assistant messages)."""
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            parts.append({"type": "text", "text": part.get("text", "")})
        elif part.get("type") == "image":
            parts.append({"type": "image_url", "image_url": {"url": part.get("image", "")}})
        elif part.get("type") != "reasoning":
            unmapped.add(str(part.get("type")))
    if len(parts) == 1 and parts[0]["type"] == "text":
        return parts[0]["text"]
    return parts


def _event_input(event: dict[str, Any], pool: list[Any]) -> list[Any]:
    if event.get("input"):
        return list(event["input"])
    messages: list[Any] = []
    for start, end in event.get("input_refs") or []:
        messages.extend(pool[start:end])
    return messages


def _usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    return Usage(
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cache_read_input_tokens=usage.get("input_tokens_cache_read"),
        cache_creation_input_tokens=usage.get("input_tokens_cache_write"),
    )


def _time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
