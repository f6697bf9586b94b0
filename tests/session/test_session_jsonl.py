"""The JSONL codec: JavaScript-identical bytes out, tolerant lines in."""

from __future__ import annotations

import math

import pytest

from knightcode._session import jsonl

# What JavaScript's JSON.stringify writes for these values (checked against node's rules:
# Number::toString switches to exponent form below 1e-6 and from 1e21).
JS_NUMBERS = [
    (1.0, "1"),
    (-0.0, "0"),
    (0.5, "0.5"),
    (100.25, "100.25"),
    (3e-06, "0.000003"),
    (1.5e-05, "0.000015"),
    (0.0001, "0.0001"),
    (1e-07, "1e-7"),
    (1.23e-10, "1.23e-10"),
    (1e20, "100000000000000000000"),
    (1e21, "1e+21"),
    (1.2345678901234569e23, "1.2345678901234569e+23"),
    (9007199254740992.0, "9007199254740992"),
    (0.30000000000000004, "0.30000000000000004"),
    (5e-324, "5e-324"),
    (-2.5e-8, "-2.5e-8"),
    (math.inf, "null"),
    (math.nan, "null"),
]


@pytest.mark.parametrize(("value", "expected"), JS_NUMBERS)
def test_numbers_are_spelled_like_javascript(value: float, expected: str) -> None:
    assert jsonl.js_number(value) == expected
    assert jsonl.dumps({"n": value}) == '{"n":' + expected + "}"


def test_encoding_is_compact_raw_utf8_with_one_lf() -> None:
    line = jsonl.encode_line({"a": [1, True, None], "s": "é 日本 😀 \u2028 \u2029 \x7f"})
    assert line == '{"a":[1,true,null],"s":"é 日本 😀 \u2028 \u2029 \x7f"}\n'.encode()
    assert line.count(b"\n") == 1


def test_control_characters_are_escaped_like_javascript() -> None:
    assert jsonl.dumps('\b\f\n\r\t\x00\x1f"\\/') == '"\\b\\f\\n\\r\\t\\u0000\\u001f\\"\\\\/"'


def test_lone_surrogates_are_escaped_and_pairs_joined() -> None:
    assert jsonl.encode_line({"s": "a\ud800b"}) == b'{"s":"a\\ud800b"}\n'
    assert jsonl.encode_line({"s": "\udfff"}) == b'{"s":"\\udfff"}\n'
    # Two code points forming a valid pair are one astral character to JavaScript.
    assert jsonl.encode_line({"s": "\ud83d\ude00"}) == '{"s":"😀"}\n'.encode()
    assert jsonl.dumps(["\ud800", 1.0]) == '["\\ud800",1]'


def test_key_order_is_kept() -> None:
    assert jsonl.dumps({"z": 1, "a": {"y": 2, "b": 3}}) == '{"z":1,"a":{"y":2,"b":3}}'


def test_unserialisable_values_raise() -> None:
    with pytest.raises(TypeError):
        jsonl.dumps({"x": {1, 2}, "f": 1.0})
    with pytest.raises(TypeError):
        jsonl.dumps({"x": object()})


def test_parse_line_tolerates_lf_and_one_cr() -> None:
    assert jsonl.parse_line(b'{"a":1}\n') == {"a": 1}
    assert jsonl.parse_line(b'{"a":1}\r\n') == {"a": 1}
    assert jsonl.parse_line(b'{"a":1}') == {"a": 1}


@pytest.mark.parametrize(
    "line", [b'{"a":1', b"not json", b'{"a":NaN}', b'{"a":Infinity}', b'{"a":1} {"b":2}', b""]
)
def test_parse_line_rejects_what_javascript_rejects(line: bytes) -> None:
    with pytest.raises(ValueError):
        jsonl.parse_line(line)


def test_parse_line_replaces_invalid_utf8_instead_of_dropping_the_entry() -> None:
    assert jsonl.parse_line(b'{"s":"a\xffb"}\n') == {"s": "a\ufffdb"}


def test_parse_keeps_u2028_and_escaped_surrogates() -> None:
    value = jsonl.parse_line('{"s":"x\u2028y","e":"\\ud83d\\ude00","l":"\\ud800"}'.encode())
    assert value == {"s": "x\u2028y", "e": "😀", "l": "\ud800"}
    # …and re-encodes to what JavaScript would write.
    assert jsonl.encode_line(value) == '{"s":"x\u2028y","e":"😀","l":"\\ud800"}\n'.encode()
