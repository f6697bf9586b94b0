"""Framing and validation units: LF-only splitting, CRLF, a last line without LF, hostile input."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from knightcode._modes.rpc.commands import CommandError, Prompt, RpcCommand, UiAnswer, parse_line
from knightcode._modes.rpc.framing import SWITCH_INTERVAL, LineSplitter, OversizedLine, StdinReader
from knightcode._modes.wire import encode_record


def split(*chunks: bytes, max_line: int = 1 << 20) -> list[bytes]:
    splitter = LineSplitter(max_line)
    lines = [line for chunk in chunks for line in splitter.feed(chunk)]
    return lines + splitter.finish()


def test_unicode_separators_are_data_not_line_breaks() -> None:
    record = {"type": "prompt", "message": "a\u2028b\u2029c\x85d\x1ce"}
    encoded = encode_record(record)
    assert "\u2028".encode() in encoded and encoded.count(b"\n") == 1  # raw on output, one record
    (line,) = split(encoded)
    assert json.loads(line) == record
    parsed = parse_line(line)
    assert isinstance(parsed, Prompt) and parsed.message == "a\u2028b\u2029c\x85d\x1ce"


def test_crlf_input_and_a_final_line_without_lf() -> None:
    assert split(b'{"a":1}\r\n{"b":2}\r\n{"c":3}') == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
    # Only one CR is stripped, and only before the LF.
    assert split(b"x\r\r\ny\rz\n") == [b"x\r", b"y\rz"]
    assert split(b"last\r") == [b"last"]
    assert split(b"") == [] and split(b"\n") == [b""]


def test_lines_split_across_chunks_in_any_place() -> None:
    data = b'{"type":"get_state","id":"\xc3\xa9"}\n' * 3
    for size in (1, 2, 5, 7, 64):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert split(*chunks) == [data[:-1].split(b"\n")[0]] * 3


def test_oversized_lines_are_dropped_but_counted() -> None:
    lines = split(b"a" * 10, b"b" * 10, b"\nok\n" + b"c" * 25, max_line=16)
    assert lines[1:] == [b"ok", lines[2]]
    assert isinstance(lines[0], OversizedLine) and lines[0].size == 20
    assert isinstance(lines[2], OversizedLine) and lines[2].size == 25
    error = parse_line(lines[0])
    assert isinstance(error, CommandError) and "exceeds the size limit" in error.error


@pytest.mark.parametrize(
    ("line", "command", "message"),
    [
        (b"{not json", "parse", "Failed to parse command: Expecting property name"),
        (b"", "parse", "Failed to parse command: Expecting value"),
        (b"[1, 2]", "parse", "expected a JSON object, got list"),
        (b'"get_state"', "parse", "expected a JSON object, got str"),
        (b'{"id":"q"}', "parse", "field 'type' must be a string"),
        (b'{"type": 5}', "parse", "field 'type' must be a string"),
        (b'{"type":"get_state","id":"\xff"}', "parse", "invalid UTF-8 at byte 26"),
        (b"[" * 100000, "parse", "nested too deeply"),
        (b'{"type":"launch_rockets"}', "launch_rockets", "Unknown command: launch_rockets"),
        (
            b'{"type":"prompt"}',
            "prompt",
            "Invalid 'prompt' command: field 'message': Field required",
        ),
        (
            b'{"type":"prompt","message":5}',
            "prompt",
            "field 'message': Input should be a valid string",
        ),
        (
            b'{"type":"set_auto_retry","enabled":"yes"}',
            "set_auto_retry",
            "field 'enabled': Input should be a valid boolean",
        ),
        (
            b'{"type":"set_steering_mode","mode":"some"}',
            "set_steering_mode",
            "field 'mode': Input should be 'all' or",
        ),
        (
            b'{"type":"prompt","message":"x","images":[{"type":"image"}]}',
            "prompt",
            "field 'images[0].data'",
        ),
        (b'{"type":"get_state","id":7}', "get_state", "field 'id': Input should be a valid string"),
        (
            b'{"type":"extension_ui_response"}',
            "extension_ui_response",
            "field 'id': Field required",
        ),
    ],
)
def test_bad_lines_name_what_is_wrong(line: bytes, command: str, message: str) -> None:
    parsed = parse_line(line)
    assert isinstance(parsed, CommandError)
    assert parsed.command == command and message in parsed.error


def test_ids_are_echoed_and_huge_names_clipped() -> None:
    parsed = parse_line(b'{"type":"nope","id":"r1"}')
    assert isinstance(parsed, CommandError) and parsed.id == "r1"
    huge = parse_line(json.dumps({"type": "x" * 100000}).encode())
    assert isinstance(huge, CommandError) and len(huge.command) < 300 and len(huge.error) < 320


def test_valid_commands_and_ui_answers() -> None:
    parsed = parse_line(b'{"type":"get_state","id":"a","extra":"ignored"}')
    assert isinstance(parsed, RpcCommand) and (parsed.type, parsed.id) == ("get_state", "a")
    answer = parse_line(b'{"type":"extension_ui_response","id":"u","confirmed":true}')
    assert isinstance(answer, UiAnswer) and answer.confirmed is True and answer.value is None


async def test_stdin_reader_hands_lines_to_the_loop_without_waiting_out_the_gil() -> None:
    # While a reply streams, the loop's thread holds the GIL for whole encoding bursts; the
    # reader thread gets it only at the switch interval, which bounds get_state latency then.
    loop = asyncio.get_running_loop()
    received: list[bytes] = []
    ended = asyncio.Event()
    read_fd, write_fd = os.pipe()
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    try:
        StdinReader(read_fd, loop, received.extend, ended.set).start()
        assert sys.getswitchinterval() <= SWITCH_INTERVAL <= 0.001
        os.write(write_fd, b'{"type":"get_state"}\r\n{"type":"abort"}\n{"type":"x"}')
        os.close(write_fd)
        await asyncio.wait_for(ended.wait(), 5)
    finally:
        sys.setswitchinterval(previous)
        os.close(read_fd)
    assert received == [b'{"type":"get_state"}', b'{"type":"abort"}', b'{"type":"x"}']
