"""The real executable in JSON and print modes against the scripted server (spec/json.md)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from knightcode.testing import (
    drop_reply,
    error_reply,
    reply,
    text_reply,
    tool_call,
    tool_call_reply,
    usage,
)
from tests.harness import types_of

from .conftest import MODEL, PROVIDER, Scripted, write_models_json


def test_text_reply_record_sequence(scripted: Scripted) -> None:
    scripted.server.add(text_reply("Hello", " world", usage=usage(input=100, output=2)))
    records, result = scripted.run_json("Say hello")
    assert result.returncode == 0, result.stderr
    assert types_of(records) == [
        "session",
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_update:text_start",
        "message_update:text_delta",
        "message_update:text_delta",
        "message_update:text_end",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    header = records[0]
    assert set(header) == {"type", "version", "id", "timestamp", "cwd"} and header["version"] == 3
    assert header["cwd"] == str(scripted.project)
    assert records[3]["message"]["content"] == [{"type": "text", "text": "Say hello"}]
    assert (
        records[5]["message"]["stopReason"] == "pending" and records[5]["message"]["content"] == []
    )
    deltas = [r["assistantMessageEvent"] for r in records if r["type"] == "message_update"]
    assert deltas[1] == {"type": "text_delta", "contentIndex": 0, "delta": "Hello"}
    assert deltas[-1] == {"type": "text_end", "contentIndex": 0, "content": "Hello world"}
    assert all("partial" not in d for d in deltas) and all(
        "message" not in r for r in records if r["type"] == "message_update"
    )
    final = records[10]["message"]
    assert final["content"] == [{"type": "text", "text": "Hello world"}]
    assert (
        final["stopReason"] == "stop"
        and final["usage"]["input"] == 100
        and final["usage"]["output"] == 2
    )
    assert (final["provider"], final["model"], final["api"]) == (
        PROVIDER,
        MODEL,
        "openai-completions",
    )
    assert records[12] == {
        "type": "agent_end",
        "messages": [records[3]["message"], final],
        "willRetry": False,
    }
    assert records[13] == {"type": "agent_settled", "aborted": False}
    assert result.stderr == ""


def test_tool_call_round_trip_sequence(scripted: Scripted) -> None:
    (scripted.project / "notes.txt").write_text("alpha\nbeta\n")
    scripted.server.add(
        tool_call_reply([tool_call("call_1", "read", {"path": "notes.txt"}, split=3)]),
        text_reply("It says alpha and beta."),
    )
    records, result = scripted.run_json("What is in notes.txt?")
    assert result.returncode == 0, result.stderr
    assert types_of(records) == [
        "session",
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_update:toolcall_start",
        "message_update:toolcall_delta",
        "message_update:toolcall_delta",
        "message_update:toolcall_delta",
        "message_update:toolcall_end",
        "message_end:assistant",
        "tool_execution_start",
        "tool_execution_end",
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        "message_start:assistant",
        "message_update:text_start",
        "message_update:text_delta",
        "message_update:text_end",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    start = records[6]["assistantMessageEvent"]
    assert start == {
        "type": "toolcall_start",
        "contentIndex": 0,
        "id": "call_1",
        "toolName": "read",
    }
    arguments = "".join(r["assistantMessageEvent"]["delta"] for r in records[7:10])
    assert json.loads(arguments) == {"path": "notes.txt"}
    end = records[13]
    assert end["toolCallId"] == "call_1" and end["isError"] is False
    assert end["result"]["content"] == [{"type": "text", "text": "alpha\nbeta\n"}]
    assert isinstance(end["durationMs"], (int, float)) and end["durationMs"] >= 0
    tool_result = records[15]["message"]
    assert tool_result["role"] == "toolResult" and tool_result["toolCallId"] == "call_1"
    # The second request carried the tool result back to the model.
    second = scripted.server.requests[1].body["messages"]
    assert second[-1]["role"] == "tool" and "alpha" in json.dumps(second[-1])


def test_unicode_line_separators_stay_inside_their_record(scripted: Scripted) -> None:
    tricky = "a\u2028b\u2029c 🐍 \r x"
    scripted.server.add(text_reply(tricky))
    result = scripted.run("--mode", "json", "go")
    raw = result.stdout.encode("utf-8")
    assert "\u2028".encode() in raw and b"\\u2028" not in raw  # raw UTF-8, not escaped
    lines = raw.split(b"\n")
    assert lines[-1] == b""  # every record ends in LF
    records = [json.loads(line) for line in lines if line]
    deltas = [
        r["assistantMessageEvent"]["delta"]
        for r in records
        if r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert deltas == [tricky]
    # splitlines() would have broken the stream apart: the reason for LF-only framing.
    assert len(result.stdout.splitlines()) > len(records)


def test_session_file_records_everything(scripted: Scripted) -> None:
    (scripted.project / "a.txt").write_text("A")
    scripted.server.add(
        tool_call_reply([tool_call("c1", "read", {"path": "a.txt"})]), text_reply("done")
    )
    records, result = scripted.run_json("read a.txt")
    assert result.returncode == 0
    entries = scripted.session_entries()
    assert entries[0] == records[0]  # the header printed first is the file's header
    kinds = [(e["type"], e.get("message", {}).get("role")) for e in entries[1:]]
    assert kinds == [
        ("model_change", None),
        ("thinking_level_change", None),
        ("message", "user"),
        ("message", "assistant"),
        ("message", "toolResult"),
        ("message", "assistant"),
    ]
    assert entries[2]["thinkingLevel"] == "off"
    assert entries[1] == {**entries[1], "provider": PROVIDER, "modelId": MODEL}
    messages = [r["message"] for r in records if r["type"] == "message_end"]
    assert [e["message"] for e in entries if e["type"] == "message"] == messages
    ids = [e["id"] for e in entries[1:]]
    assert [e["parentId"] for e in entries[1:]] == [None, *ids[:-1]]
    assert scripted.session_files()[0].stat().st_mode & 0o777 == 0o600


def test_parallel_tool_results_in_call_order(scripted: Scripted) -> None:
    # The first call is the slowest: results must still be recorded in call order.
    scripted.server.add(
        tool_call_reply(
            [
                tool_call("slow", "bash", {"command": "sleep 0.6; echo slow"}),
                tool_call("fast", "bash", {"command": "echo fast"}),
            ]
        ),
        text_reply("ok"),
    )
    started = time.monotonic()
    records, result = scripted.run_json("run both")
    assert result.returncode == 0, result.stderr
    ends = [r["toolCallId"] for r in records if r["type"] == "tool_execution_end"]
    assert ends == ["fast", "slow"]  # they really ran concurrently
    results = [
        r["message"]["toolCallId"]
        for r in records
        if r["type"] == "message_end" and r["message"]["role"] == "toolResult"
    ]
    assert results == ["slow", "fast"]
    starts = [r["toolCallId"] for r in records if r["type"] == "tool_execution_start"]
    assert starts == ["slow", "fast"]
    assert time.monotonic() - started < 10


def test_retry_on_429_and_529_with_events(scripted: Scripted) -> None:
    scripted.server.add(
        error_reply(429, "Too many requests", headers={"retry-after": "0"}),
        error_reply(529, "Overloaded"),
        text_reply("finally"),
    )
    records, result = scripted.run_json("hi")
    assert result.returncode == 0, result.stderr
    retry = [r for r in records if r["type"].startswith("auto_retry")]
    assert [(r["type"], r["attempt"]) for r in retry] == [
        ("auto_retry_start", 1),
        ("auto_retry_start", 2),
        ("auto_retry_end", 2),
    ]
    assert (
        retry[0]["maxAttempts"] == 3
        and retry[0]["delayMs"] == 10
        and "429" in retry[0]["errorMessage"]
    )
    assert retry[1]["delayMs"] == 20 and "529" in retry[1]["errorMessage"]
    assert retry[2] == {"type": "auto_retry_end", "success": True, "attempt": 2}
    ends = [r for r in records if r["type"] == "agent_end"]
    assert [e["willRetry"] for e in ends] == [True, True, False]
    assert types_of(records)[-1] == "agent_settled"
    # The failed attempts are in the session file, but were not sent back to the model.
    assert len(scripted.server.requests) == 3
    assert all(m["role"] != "assistant" for m in scripted.server.requests[2].body["messages"])


def test_retry_on_a_dropped_stream(scripted: Scripted) -> None:
    scripted.server.add(
        drop_reply(2, text=["partial answer ", "that never ", "ends"]), text_reply("whole")
    )
    records, result = scripted.run_json("hi")
    assert result.returncode == 0, result.stderr
    assert [r["type"] for r in records if r["type"].startswith("auto_retry")] == [
        "auto_retry_start",
        "auto_retry_end",
    ]
    assert records[-3]["type"] == "agent_end" and records[-3]["messages"][-1]["content"] == [
        {"type": "text", "text": "whole"}
    ]


def test_retries_exhausted_report_the_final_error(scripted: Scripted) -> None:
    scripted.server.add(*[error_reply(503, "Service unavailable") for _ in range(4)])
    records, result = scripted.run_json("hi")
    assert result.returncode == 1
    retry = [r for r in records if r["type"].startswith("auto_retry")]
    assert [r["type"] for r in retry] == ["auto_retry_start"] * 3 + ["auto_retry_end"]
    assert (
        retry[-1]["success"] is False
        and retry[-1]["attempt"] == 3
        and "503" in retry[-1]["finalError"]
    )


def test_fatal_401_is_one_clear_error(scripted: Scripted) -> None:
    scripted.server.add(error_reply(401, "Invalid API key"))
    result = scripted.run("-p", "hi")
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("knightcode: error: 401") and "Invalid API key" in line
    assert len(scripted.server.requests) == 1  # not retried


def test_print_mode_prints_the_final_text(scripted: Scripted) -> None:
    scripted.server.add(reply(thinking=["pondering"], text=["The answer", " is 42."]))
    result = scripted.run("-p", "question")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer is 42.\n"
    assert result.stderr == ""


def test_print_mode_reads_piped_stdin_and_at_files(scripted: Scripted) -> None:
    (scripted.project / "spec.md").write_text("# Spec\nbe brief\n")
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "@spec.md", "summarise", stdin="piped text")
    assert result.returncode == 0, result.stderr
    sent = scripted.server.requests[0].body["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else "".join(part.get("text", "") for part in sent)
    assert (
        '<file name="' in text
        and "be brief" in text
        and "piped text" in text
        and "summarise" in text
    )


def test_several_messages_run_in_order(scripted: Scripted) -> None:
    scripted.server.add(text_reply("one"), text_reply("two"))
    records, result = scripted.run_json("first", "second")
    assert result.returncode == 0
    users = [
        r["message"]["content"]
        for r in records
        if r["type"] == "message_end" and r["message"]["role"] == "user"
    ]
    assert users == [[{"type": "text", "text": "first"}], [{"type": "text", "text": "second"}]]
    assert [r["type"] for r in records].count("agent_settled") == 2


def test_no_session_writes_nothing(scripted: Scripted) -> None:
    scripted.server.add(text_reply("ok"))
    records, result = scripted.run_json("--no-session", "hi")
    assert result.returncode == 0 and records[0]["type"] == "session"
    assert scripted.session_files() == []


def test_continue_uses_the_most_recent_session(scripted: Scripted) -> None:
    scripted.server.add(text_reply("first answer"), text_reply("second answer"))
    assert scripted.run("-p", "remember 7").returncode == 0
    result = scripted.run("-p", "-c", "what number?")
    assert result.returncode == 0, result.stderr
    assert len(scripted.session_files()) == 1
    sent = scripted.server.requests[1].body["messages"]
    assert [m["role"] for m in sent if m["role"] != "system"] == ["user", "assistant", "user"]


def test_abort_with_sigint_records_an_aborted_message(scripted: Scripted) -> None:
    scripted.server.add(text_reply(*["tick "] * 200, delay=0.05))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "knightcode",
            "--model",
            f"{PROVIDER}/{MODEL}",
            "--mode",
            "json",
            "count slowly",
        ],
        cwd=scripted.project,
        env=scripted.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    seen = b""
    while b"text_delta" not in seen:
        seen += process.stdout.readline()
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, _err = process.communicate(timeout=10)
    assert time.monotonic() - started < 3
    records = [json.loads(line) for line in (seen + out).split(b"\n") if line]
    assert process.returncode == 1
    final = [r for r in records if r["type"] == "message_end"][-1]["message"]
    assert final["stopReason"] == "aborted"
    assert records[-1] == {"type": "agent_settled", "aborted": True}
    entries = scripted.session_entries()
    assert entries[-1]["message"]["stopReason"] == "aborted"


def test_stdout_is_only_jsonl_even_when_plugins_print(scripted: Scripted, tmp_path: Path) -> None:
    ext = tmp_path / "noisy.py"
    ext.write_text(
        "from knightcode import hookimpl\n\n"
        "@hookimpl\ndef agent_start(ctx):\n    ctx.ui.notify('hello from a plugin')\n"
    )
    scripted.server.add(text_reply("ok"))
    records, result = scripted.run_json("-e", str(ext), "hi")
    assert result.returncode == 0
    assert all(isinstance(r, dict) and "type" in r for r in records)
    assert "hello from a plugin" in result.stderr


def test_plugin_entries_and_session_name_reach_the_stream_and_file(
    scripted: Scripted, tmp_path: Path
) -> None:
    ext = tmp_path / "stateful.py"
    ext.write_text(
        "from knightcode import hookimpl\n\n"
        "@hookimpl\ndef session_start(ctx):\n    ctx.set_session_name('  my task  ')\n\n"
        "@hookimpl\ndef agent_end(messages, ctx):\n"
        "    ctx.append_entry('counter', {'messages': len(messages)})\n"
    )
    scripted.server.add(text_reply("ok"))
    records, result = scripted.run_json("-e", str(ext), "hi")
    assert result.returncode == 0, result.stderr
    named = [r for r in records if r["type"] == "session_info_changed"]
    assert named == [{"type": "session_info_changed", "name": "my task"}]
    appended = [r for r in records if r["type"] == "entry_appended"]
    assert len(appended) == 1
    entry = appended[0]["entry"]
    assert (
        entry["type"] == "custom"
        and entry["customType"] == "counter"
        and entry["data"] == {"messages": 2}
    )
    stored = scripted.session_entries()
    assert entry in stored
    assert any(e["type"] == "session_info" and e["name"] == "my task" for e in stored)


def test_an_image_argument_is_sent_as_an_image(scripted: Scripted) -> None:
    png = (
        b"\x89PNG\r\n\x1a\n"
        + b"\x00\x00\x00\rIHDR"
        + (1).to_bytes(4, "big") * 2
        + b"\x08\x02\x00\x00\x00"
    )
    (scripted.project / "shot.txt").write_bytes(png)  # recognised by content, not by name
    write_models_json(scripted.agent_dir, scripted.server.base_url, input=["text", "image"])
    scripted.server.add(text_reply("a pixel"))
    result = scripted.run("-p", "@shot.txt", "what is this?")
    assert result.returncode == 0, result.stderr
    content = scripted.server.requests[0].body["messages"][-1]["content"]
    kinds = [part["type"] for part in content]
    assert kinds == ["text", "image_url"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
