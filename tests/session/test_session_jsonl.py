"""The JSONL codec: JavaScript-identical bytes out, tolerant lines in."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from knightcode._modes.wire import RecordWriter, encode_record
from knightcode._session import jsonl
from knightcode._session.jsnumber import encode_js

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
    (2.0**60, "1152921504606847000"),  # shortest digits then zeros, not int()'s digits
    (1e16, "10000000000000000"),
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


# --- one writer for session files and the JSON/RPC stream --------------------------------------

WIRE_RECORD = {
    "type": "message_end",
    "one": 1.0,
    "tiny": 3e-06,
    "huge": 1e21,
    "negative_zero": -0.0,
    "big_integral": 2.0**60,
    "separator": "a\u2028b\u2029c",
    "lone": "x\ud800y",
    "pair": "\ud83d\ude00",
    "looks_like_floats": ":1.0, 3e-06] 1e+16}",
}
WIRE_BYTES = (
    '{"type":"message_end","one":1,"tiny":0.000003,"huge":1e+21,"negative_zero":0,'
    '"big_integral":1152921504606847000,"separator":"a\u2028b\u2029c","lone":"x\\ud800y",'
    '"pair":"😀","looks_like_floats":":1.0, 3e-06] 1e+16}"}\n'
).encode()


def test_wire_records_are_spelled_like_session_lines() -> None:
    assert encode_record(WIRE_RECORD) == WIRE_BYTES
    assert jsonl.encode_line(WIRE_RECORD) == WIRE_BYTES


def test_record_writer_writes_the_same_bytes_to_a_real_pipe(tmp_path: Path) -> None:
    # A child process reads the pipe into a file: what a client of `--mode json` receives.
    out = tmp_path / "out.jsonl"
    reader = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import shutil,sys; shutil.copyfileobj(sys.stdin.buffer, open({str(out)!r}, 'wb'))",
        ],
        stdin=subprocess.PIPE,
    )
    assert reader.stdin is not None
    writer = RecordWriter(reader.stdin)
    writer.write(WIRE_RECORD)
    writer.write(large_record())
    reader.stdin.close()
    assert reader.wait(timeout=30) == 0
    assert out.read_bytes() == WIRE_BYTES + jsonl.encode_line(large_record())


def large_record() -> dict[str, object]:
    # A get_messages response: elements with floats JavaScript spells differently, elements whose
    # text only looks like such floats (even between delimiters), and plain ones.
    messages: list[object] = []
    for index in range(3 * jsonl.LARGE_LIST):
        if index % 5 == 0:
            messages.append({"role": "assistant", "cost": {"input": 0.0, "total": index * 1e-6}})
        elif index % 5 == 1:
            messages.append({"role": "user", "content": f"x,{index}.0] y e-0{index} e+1"})
        elif index % 5 == 2:
            messages.append({"role": "toolResult", "content": ",1.0]", "n": 1.0})
        elif index % 5 == 3:
            messages.append({"role": "user", "content": "é 😀 \u2028" * index, "n": index})
        else:  # escapes in an otherwise ASCII element: control characters, a lone surrogate
            messages.append({"role": "user", "content": f"\x01\t\ud800 {index}", "n": 2.5})
    return {"id": "m", "type": "response", "success": True, "data": {"messages": messages}}


def test_a_large_record_is_encoded_in_chunks_exactly_as_one_line() -> None:
    record = large_record()
    assert jsonl.holds_large_list(record)
    line = jsonl.encode_line(record)
    assert b"".join(jsonl.iter_line(record)) == line
    assert line.decode() == jsonl.dumps(record) + "\n"
    # Element by element equals the whole value encoded by the exact (pure Python) encoder.
    assert line.decode() == encode_js(record).replace("\ud800", "\\ud800") + "\n"
    assert json.loads(line) == json.loads(json.dumps(record))


def test_float_lookalikes_inside_strings_stay_as_written() -> None:
    for text in ("1.0,", "[2.0]", ":3e-06}", "5e+16,", "-0.0]", ",1.0]"):
        assert jsonl.dumps({"s": text}) == '{"s":' + json.dumps(text) + "}"
        # …also when the same spelling is a real float of the value.
        assert jsonl.dumps({"s": text, "f": float(text.strip("[],:}"))}).startswith(
            '{"s":' + json.dumps(text) + ',"f":'
        )


# CI provides node (.ci/run) and sets this, so the comparison never skips there. Read at import:
# the hermetic test environment drops every KNIGHTCODE_ variable before each test.
REQUIRE_NODE = os.environ.get("KNIGHTCODE_REQUIRE_NODE") == "1"


def test_encoding_equals_node_json_stringify(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        if REQUIRE_NODE:
            pytest.fail("node, the reference runtime, is not on PATH")
        pytest.skip("needs node, the reference runtime")
    rng = random.Random(11)
    values: list[object] = [WIRE_RECORD, large_record(), 2.0**53, 5e-324, 1e-7, 123456.0]
    for _ in range(2000):
        magnitude = 10.0 ** rng.randint(-25, 25)
        number = rng.choice([rng.uniform(-1, 1) * magnitude, float(rng.randint(-999, 999))])
        values.append({"n": number, "l": [number, {"k": number}], "s": repr(number) + ","})
    source = tmp_path / "values.json"
    source.write_text(json.dumps(values))  # ASCII: lone surrogates travel as \ud800
    script = (
        "const v = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));"
        "process.stdout.write(v.map((x) => JSON.stringify(x) + '\\n').join(''));"
    )
    node = subprocess.run(
        ["node", "-e", script, str(source)], capture_output=True, check=True, timeout=60
    )
    assert node.stdout == b"".join(jsonl.encode_line(value) for value in values)


def test_a_record_that_fails_midway_leaves_the_stream_line_framed(tmp_path: Path) -> None:
    record = large_record()
    messages = record["data"]["messages"]  # type: ignore[index]
    messages.append({"role": "user", "content": "x" * 3_000_000})  # a first chunk goes out
    messages.append({"role": "user", "content": object()})
    out = tmp_path / "out.jsonl"
    with out.open("wb") as stream:
        writer = RecordWriter(stream)
        with pytest.raises(TypeError):
            writer.write(record)
        writer.write({"type": "response", "success": False})
    lines = out.read_bytes().split(b"\n")
    assert lines[-2:] == [b'{"type":"response","success":false}', b""]
    assert len(lines) == 3  # the broken record is one line of its own
