"""The incremental SSE parser: any chunking gives the same events; line endings, comments, multi-line data."""

from __future__ import annotations

from anthropic._streaming import SSEDecoder
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_support import DATA, capture_files

from tracekit.providers.sse import ServerSentEvent, SSEParser, encode_event, encode_json_event, iter_sse, parse_sse

STREAMS = [p.read_bytes() for p in sorted(DATA.glob("*.sse"))] + [p.read_bytes() for p in capture_files()]


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for point in points:
        pieces.append(data[last:point])
        last = point
    pieces.append(data[last:])
    return pieces


def test_byte_by_byte_equals_whole() -> None:
    for data in STREAMS:
        whole = parse_sse(data)
        assert whole, "fixture has events"
        assert list(iter_sse(data[i : i + 1] for i in range(len(data)))) == whole


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(STREAMS))), st.lists(st.integers(min_value=0, max_value=10_000), max_size=40))
def test_random_chunk_splits_give_the_same_events(which: int, cuts: list[int]) -> None:
    data = STREAMS[which]
    assert list(iter_sse(_split(data, cuts))) == parse_sse(data)


def test_events_match_the_sdk_decoder() -> None:
    for data in STREAMS:
        theirs = [(e.event, e.data) for e in SSEDecoder().iter_bytes(iter([data]))]
        assert [(e.event, e.data) for e in parse_sse(data)] == theirs


def test_line_endings_comments_and_multiline_data() -> None:
    data = b": hello\r\nevent: a\r\ndata: one\r\ndata: two\r\n\r\nevent: b\rdata: x\r\rdata:no-space\n\n"
    assert parse_sse(data) == [
        ServerSentEvent(data="one\ntwo", event="a"),
        ServerSentEvent(data="x", event="b"),
        ServerSentEvent(data="no-space"),
    ]


def test_crlf_split_between_chunks_is_one_line_break() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n\r") == [ServerSentEvent(data="a")]
    assert parser.feed(b"\ndata: b\r\n\r\n") == [ServerSentEvent(data="b")]


def test_utf8_character_split_across_chunks() -> None:
    data = "data: 北京\n\n".encode()
    cut = data.index("京".encode()) + 1
    assert list(iter_sse([data[:cut], data[cut:]])) == [ServerSentEvent(data="北京")]


def test_bom_id_retry_and_empty_events() -> None:
    data = b"\xef\xbb\xbfid: 7\nretry: 1500\ndata: x\n\nevent: nothing\n\nretry: soon\ndata: y\n\n"
    assert parse_sse(data) == [ServerSentEvent(data="x", id="7", retry=1500), ServerSentEvent(data="y", id="7")]


def test_last_event_without_blank_line_is_dropped_unless_flushed() -> None:
    data = b'data: 1\n\nevent: message_stop\ndata: {"type":"message_stop"}'
    parser = SSEParser()
    assert parser.feed(data) == [ServerSentEvent(data="1")]
    assert parser.has_incomplete
    assert parser.close() == []
    assert parse_sse(data, flush_incomplete=True)[1:] == [
        ServerSentEvent(data='{"type":"message_stop"}', event="message_stop")
    ]


@given(st.text(alphabet=st.characters(blacklist_characters="\r", blacklist_categories=("Cs",))),
       st.one_of(st.none(), st.text(alphabet="abcdefgh_", min_size=1)))
def test_encoder_round_trip(data: str, name: str | None) -> None:
    assert parse_sse(encode_event(data, event=name)) == [ServerSentEvent(data=data, event=name)]


def test_json_event_keeps_chinese_unescaped() -> None:
    encoded = encode_json_event({"text": "你好"}, "content_block_delta")
    assert "你好".encode() in encoded
    assert parse_sse(encoded)[0].json() == {"text": "你好"}
