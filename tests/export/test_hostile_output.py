"""Hostile trace files on the way out (issue 27, C): an ``Infinity`` in a latency or a time, text blocks whose
``text`` is a list, a number, null or an object, and terminal escape sequences in the content. The files are
written by hand on purpose: they are what an attacker or a damaged disk gives, which no producer writes.
``export otel`` writes a valid OTLP document and names what it left out; ``show`` and ``analyze --html`` show
the whole folder, the odd blocks as text; ``show`` prints control characters as visible escapes and Chinese
exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.cli import cli

HEADER = '{"kind":"header","format":1,"trace_id":"%s"}'


def _write(folder: Path, name: str, *lines: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text("\n".join([HEADER % name, *lines]) + "\n", encoding="utf-8")
    return path


def test_export_otel_leaves_out_non_finite_numbers_and_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path / "traces", "inf",
                  '{"kind":"model_call","index":0,"provider":"openai","latency_ms":Infinity,"ttft_ms":NaN,'
                  '"t":Infinity}',
                  '{"kind":"assistant_message","message_index":1,"content":[{"type":"text","text":"晴"}],'
                  '"model_call":0}')  # fmt: skip
    out = tmp_path / "otel.json"
    result = CliRunner().invoke(cli, ["export", "otel", str(path.parent), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.exception is None
    document = json.loads(out.read_text(encoding="utf-8"), parse_constant=lambda c: pytest.fail(f"{c} in OTLP"))
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [span["name"].split()[0] for span in spans] == ["invoke_agent", "chat"]
    assert all(int(span["endTimeUnixNano"]) >= int(span["startTimeUnixNano"]) >= 0 for span in spans)
    assert "model_call.latency_ms: inf is not a finite number" in result.output
    assert "model_call.ttft_ms: nan" in result.output and str(path) in result.output


ODD_TEXTS = {"a_list": [1, "二"], "a_number": 5, "null": None, "an_object": {"城市": "北京"}}


@pytest.mark.parametrize("command", ["show", "html"])
def test_a_text_block_of_any_json_type_is_shown_as_text(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "traces"
    for name, text in ODD_TEXTS.items():
        block = json.dumps([{"type": "text", "text": text}], ensure_ascii=False)
        _write(folder, name, f'{{"kind":"user_message","message_index":0,"content":{block}}}',
               f'{{"kind":"assistant_message","message_index":1,"content":{block}}}')
    _write(folder, "z_good", '{"kind":"user_message","message_index":0,"content":"北京天气？"}',
           '{"kind":"assistant_message","message_index":1,"content":[{"type":"text","text":"晴"}]}')
    if command == "show":
        result = CliRunner().invoke(cli, ["show", str(folder)])
        assert result.exit_code == 0, result.output
        assert '[1] assistant [1, "二"]' in result.output and '{"城市": "北京"}' in result.output
        assert "[1] assistant 晴" in result.output
    else:
        html = tmp_path / "html"
        result = CliRunner().invoke(cli, ["analyze", str(folder), "--html", str(html)])
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert result.exit_code == 0, result.output
        assert (html / "index.html").exists()
        pages = "".join(p.read_text(encoding="utf-8") for p in html.rglob("*.html"))
        assert "城市" in pages and "z_good" in pages


def test_show_prints_control_characters_as_escapes_and_chinese_exactly(tmp_path: Path) -> None:
    content = json.dumps("北京\x1b]0;pwned\x07天气\x1b[31m红\u202e右\x9b", ensure_ascii=False)
    path = _write(tmp_path, "esc", f'{{"kind":"user_message","message_index":0,"content":{content}}}')
    result = CliRunner().invoke(cli, ["show", str(path)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output
    assert "\x9b" not in result.output
    assert r"北京\x1b]0;pwned\x07天气\x1b[31m红\u202e右\x9b" in result.output
