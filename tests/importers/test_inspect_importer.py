"""import inspect: inspect_ai eval logs, written by inspect_ai itself, read without it.

The same session through the recording proxy (inspect_ai's openai provider in front of the fake upstream)
must analyze like the proxy's recording; inspect_ai's offline ``mockllm/model`` makes the multi-sample,
multi-epoch and tool-error logs (mockllm needs explicit usage on its outputs)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai._util.content import ContentAudio, ContentText
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageTool, ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import ToolError, tool
from producer_support import analyze_json, final_answers, import_command, recorded_upstream, session_view
from test_otel_importer import WEATHER, weather_script

from tracekit.importers import import_inspect, write_traces
from tracekit.trace import load_trace, trace_files


@tool
def get_weather() -> Any:
    async def execute(city: str) -> str:
        """The weather of a city.

        Args:
            city: The city.
        """
        if city not in WEATHER:
            raise ToolError(f"unknown city {city}")
        return WEATHER[city]

    return execute


def weather_task(*questions: str) -> Task:
    samples = [Sample(input=question, target="晴", id=number + 1) for number, question in enumerate(questions)]
    return Task(dataset=samples, solver=[use_tools(get_weather()), generate()], scorer=includes())


def mock_model() -> Any:
    """mockllm answering by the conversation: call get_weather for the city asked about, then answer."""
    usage = ModelUsage(input_tokens=50, output_tokens=7, total_tokens=57)

    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        if isinstance(messages[-1], ChatMessageTool):
            result = messages[-1].error.message if messages[-1].error else messages[-1].text
            output = ModelOutput.from_content("mockllm/model", f"结果：{result}")
        else:
            city = str(messages[-1].text)[:2]
            output = ModelOutput.for_tool_call("mockllm/model", "get_weather", {"city": city})
        output.usage = usage
        return output

    return get_model("mockllm/model", custom_outputs=answer)


def the_one_imported_trace(tmp_path: Path) -> Any:
    """The single trace ``import_inspect`` makes of the logs under ``tmp_path / "logs"``, as written and read
    back (the import itself reports no problem)."""
    problems: list[str] = []
    [imported] = import_inspect([tmp_path / "logs"], problems)
    assert problems == []
    [path] = write_traces([imported], tmp_path / "out")
    return load_trace(path)


def test_inspect_log_matches_the_proxy(tmp_path: Path) -> None:
    with recorded_upstream(weather_script(), tmp_path / "recorded") as proxy:
        model = get_model("openai/gpt-test", base_url=proxy.url + "/v1", api_key="sk-test", responses_api=False)
        [log] = inspect_eval(weather_task("北京、上海、广州天气怎么样？"), model=model, log_dir=str(tmp_path / "logs"),
                             display="none", max_retries=0)
    assert log.status == "success", log.error
    imported = tmp_path / "imported"
    result = import_command("inspect", str(tmp_path / "logs"), "--out", str(imported))
    assert result.exit_code == 0, result.output
    ours, theirs = analyze_json(imported), analyze_json(tmp_path / "recorded")
    assert [session_view(t) for t in ours["traces"]] == [session_view(t) for t in theirs["traces"]]
    assert ours["traces"][0]["stats"]["tool_calls"] == 3 and ours["traces"][0]["stats"]["llm_calls"] == 3
    assert final_answers(imported) == final_answers(tmp_path / "recorded") == ["北京晴，上海多云，广州有雨。"]
    assert ours["traces"][0]["meta"]["scores"]["includes"]["value"] == "C"


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_one_trace_per_sample_and_epoch(tmp_path: Path, log_format: str) -> None:
    [log] = inspect_eval(weather_task("北京天气？", "纽约天气？"), model=mock_model(), epochs=2,
                         log_dir=str(tmp_path / "logs"), log_format=log_format, display="none")
    assert log.status == "success", log.error
    problems: list[str] = []
    traces = import_inspect([tmp_path / "logs"], problems)
    assert problems == []
    by_key = {(t.header.meta["sample_id"], t.header.meta["epoch"]): t for t in traces}
    assert sorted(by_key) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    beijing, new_york = by_key[(1, 2)], by_key[(2, 1)]
    assert beijing.header.meta["scores"]["includes"]["value"] == "C"
    assert new_york.header.meta["scores"]["includes"]["value"] == "I"
    [result] = [r for r in new_york.records if r.kind == "tool_result"]
    assert result.is_error and result.content == "unknown city 纽约", "inspect's tool error is an error result"
    calls = [r for r in beijing.records if r.kind == "model_call"]
    assert [(c.usage.input_tokens, c.usage.output_tokens) for c in calls] == [(50, 7), (50, 7)]
    assert [r.content for r in beijing.records if r.kind == "assistant_message"][-1] == [
        {"type": "text", "text": "结果：晴"}]


def test_damaged_sample_is_named_and_the_rest_imported(tmp_path: Path) -> None:
    [log] = inspect_eval(weather_task("北京天气？", "上海天气？"), model=mock_model(), log_dir=str(tmp_path / "logs"),
                         display="none")
    path = Path(log.location)
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("samples/2_epoch_1.json")
        assert info.compress_type == 93, "inspect_ai writes zstd entries"
    data = bytearray(path.read_bytes())
    local = data[info.header_offset : info.header_offset + 30]  # the entry's local header: name and extra lengths
    start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
    data[start + 20 : start + 40] = b"\x00" * 20
    path.write_bytes(bytes(data))
    out = tmp_path / "out"
    result = import_command("inspect", str(path), "--out", str(out))
    assert result.exit_code == 2
    assert f"{path}:samples/2_epoch_1.json: unreadable" in result.output
    [trace] = [load_trace(p) for p in trace_files([out])]
    assert trace.header.meta["sample_id"] == 1 and trace.final_answer() == "结果：晴"


def test_content_without_a_canonical_form_is_named_in_problems(tmp_path: Path) -> None:
    # A question with a recording attached: the audio part has no canonical form, and the trace says so.
    question = ChatMessageUser(content=[ContentText(text="北京天气？"),
                                        ContentAudio(audio="data:audio/wav;base64,UklGRg==", format="wav")])
    task = Task(dataset=[Sample(input=[question], target="晴", id=1)], solver=[use_tools(get_weather()), generate()],
                scorer=includes())  # fmt: skip
    [log] = inspect_eval(task, model=mock_model(), log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    trace = the_one_imported_trace(tmp_path)
    assert trace.final_answer() == "结果：晴" and [c.input for c in trace.calls()] == [{"city": "北京"}]
    [note] = trace.header.meta["problems"]
    assert note == f"{log.location}:samples/1_epoch_1.json: message content of type audio not mapped (left out)"
    assert [str(p).split(": ", 1)[1] for p in trace.problems] == [note], "analyze reports it as a problem"


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_condensed_long_texts_are_read_back_from_the_attachments(tmp_path: Path, log_format: str) -> None:
    # inspect_ai moves every event string over 100 characters to the sample's attachments and leaves an
    # attachment:// reference in its place: the model calls' inputs must read as the messages were.
    question = "北京天气？" + "请说明温度、湿度和风力。" * 10
    [log] = inspect_eval(weather_task(question), model=mock_model(), log_dir=str(tmp_path / "logs"),
                         log_format=log_format, display="none")  # fmt: skip
    assert log.status == "success", log.error
    trace = the_one_imported_trace(tmp_path)
    assert [r.content for r in trace.records if r.kind == "user_message"] == [question]
    assert [(c.input, c.result_text) for c in trace.calls()] == [({"city": "北京"}, "晴")]
    assert trace.stats().llm_calls == 2 and trace.problems == []
    if log_format == "json":  # an attachment lost from the log: the reference is kept, and the trace says so
        document = orjson.loads(Path(log.location).read_bytes())
        assert document["samples"][0]["attachments"], "the log was condensed"
        document["samples"][0]["attachments"] = {}
        Path(log.location).write_bytes(orjson.dumps(document))
        [imported] = import_inspect([tmp_path / "logs"], [])
        [note] = imported.records[0].meta["problems"]
        assert note.startswith(f"{log.location}: samples[0]: ") and "without their attachment" in note


BLOCKED = """
import sys
from importlib.abc import MetaPathFinder

class NoInspect(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "inspect_ai":
            raise ImportError("inspect_ai is not installed here")
        return None

sys.meta_path.insert(0, NoInspect())
from tracekit.importers import import_inspect
problems = []
traces = import_inspect(sys.argv[1:], problems)
print(len(traces), problems, "inspect_ai" in sys.modules)
"""


def test_eval_logs_are_read_without_inspect_ai(tmp_path: Path) -> None:
    [log] = inspect_eval(weather_task("北京天气？"), model=mock_model(), log_dir=str(tmp_path / "logs"), display="none")
    assert log.location.endswith(".eval")
    result = subprocess.run([sys.executable, "-c", BLOCKED, log.location], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "[]", "False"]
