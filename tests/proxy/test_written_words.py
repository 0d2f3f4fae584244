"""The words the late-secret index notes (``written_tokens.written_words``): the fast split gives exactly the
words of the regular expression the index is defined by, with or without ``\\uXXXX`` escapes in the bytes."""

from __future__ import annotations

import random

import orjson

from tracekit.proxy.written_tokens import _SEPARATORS, MIN_WORD, WrittenTokens, written_words


def _by_expression(data: bytes) -> set[int]:
    return {hash(word) for word in _SEPARATORS.split(data) if len(word) >= MIN_WORD}


def test_the_fast_split_finds_the_words_the_expression_finds() -> None:
    alphabet = "abcXYZ0189 -_:/\\\"\t\n{}é北京\x01u"
    rng = random.Random(31)
    lines = [orjson.dumps({"kind": "user_message", "content": "key sk-ant-abcdefgh12345678 北京 tool_use_0001"}),
             b'{"text":"a\\u0001bcdefghijk \\u00e9xyzxyzxyz9"}', b"", b"short words only", b"\t\r\n\x0b\x0c"]
    lines += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(200))).encode() for _ in range(500)]
    lines += [orjson.dumps({"t": rng.random(), "text": "".join(rng.choice(alphabet) for _ in range(80))})
              for _ in range(200)]  # fmt: skip
    for data in lines:
        assert written_words(data) == _by_expression(data), data


def test_a_secret_is_found_in_the_file_it_was_written_to() -> None:
    tokens = WrittenTokens()
    tokens.note("a.jsonl", orjson.dumps({"content": "北京 my key is tkform-abcdefgh12, thanks"}))
    tokens.note("b.jsonl", b'{"content":"nothing here"}')
    assert tokens.candidates("tkform-abcdefgh12") == {"a.jsonl"}
