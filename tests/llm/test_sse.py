"""The SSE decoder: framing rules, chunk boundaries, and the fast JSON parse."""

from __future__ import annotations

import pytest

from knightcode._llm.sse import SSEDecoder, parse_json


def feed_all(chunks: list[bytes]) -> list[str]:
    decoder = SSEDecoder()
    out: list[str] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    return out + decoder.flush()


def test_events_split_anywhere() -> None:
    stream = 'data: {"a":1}\n\ndata: {"b":"é\u2028x"}\n\ndata: [DONE]\n\n'.encode()
    expected = ['{"a":1}', '{"b":"é\u2028x"}', "[DONE]"]
    for size in range(1, 12):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        assert feed_all(chunks) == expected, size


def test_crlf_comments_fields_and_multiline_data() -> None:
    stream = (
        b": ping\r\n\r\nevent: message_start\r\nid: 7\r\n"
        b"data: line1\r\ndata:line2\r\n\r\nretry: 10\n\n"
    )
    assert feed_all([stream]) == ["line1\nline2"]


def test_feed_events_keeps_names() -> None:
    decoder = SSEDecoder()
    events = decoder.feed_events(b"event: ping\ndata: {}\n\ndata: x\n\n")
    assert events == [("ping", "{}"), ("message", "x")]


def test_flush_delivers_an_unterminated_last_event() -> None:
    assert feed_all([b"data: a\n\ndata: b"]) == ["a", "b"]
    assert feed_all([b"data: a\n\n"]) == ["a"]


def test_parse_json() -> None:
    assert parse_json('{"a":[1,2,{"b":null}]}') == {"a": [1, 2, {"b": None}]}
    assert parse_json(' {"a":1}') == {"a": 1}  # leading space: the slow path
    with pytest.raises(ValueError):
        parse_json("{nope")
