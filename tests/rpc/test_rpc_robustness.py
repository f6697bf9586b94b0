"""Hostile input, end of input and signals: RPC mode answers every bad line and never dies of
one, and it always leaves a complete session file behind."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys

from knightcode.testing import text_reply

from .conftest import MODEL, PROVIDER, Rpc, is_type

SHUTDOWN_PLUGIN = """
from pathlib import Path

from knightcode import hookimpl


@hookimpl
def session_shutdown(reason, ctx):
    with open(Path(ctx.cwd) / "shutdown.log", "a") as log:
        log.write(reason + "\\n")
"""


def hostile_lines(count: int) -> list[bytes]:
    """``count`` lines, each of which must be answered with an error response."""
    rng = random.Random(20240605)
    fixed = [
        b'{"type":"prompt","message":"' + b"x" * (5 << 20),  # 5 MB, unterminated
        json.dumps({"type": "y" * (3 << 20)}).encode(),  # 3 MB command name
        json.dumps(
            {"type": "prompt", "message": "z" * (4 << 20)}
        ).encode(),  # 4 MB, but the agent is busy
        b"[" * 200000,
        b'{"type":"prompt","message":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"a":' * 3000 + b"1" + b"}" * 3000,
        b"\xff\xfe\xfd",
        b'{"type":"get_state","id":"\xc3\x28"}',
        b"\x00\x00\x00",
        b'{"type":"\\ud800"}',
        b"null",
        b"42",
        b'"prompt"',
        b"[]",
        b"{}",
        b"",
        b"   ",
        b"\r",
        b'{"type":7}',
        b'{"type":null}',
        b'{"type":["prompt"]}',
        b'{"type":"prompt","message":5}',
        b'{"type":"prompt","message":null}',
        b'{"type":"prompt","message":"x","images":"nope"}',
        b'{"type":"prompt","message":"x","images":[{"type":"video","data":"","mimeType":"x"}]}',
        b'{"type":"prompt","message":"x","streamingBehavior":"later"}',
        b'{"type":"prompt","message":"busy, no behaviour"}',
        b'{"type":"set_auto_retry","enabled":"yes"}',
        b'{"type":"set_auto_compaction","enabled":1}',
        b'{"type":"set_thinking_level","level":"ultra"}',
        b'{"type":"set_steering_mode","mode":1}',
        b'{"type":"set_model","provider":"scripted"}',
        b'{"type":"set_model","provider":1,"modelId":2}',
        b'{"type":"fork","entryId":null}',
        b'{"type":"fork","entryId":"nope"}',
        b'{"type":"switch_session"}',
        b'{"type":"switch_session","sessionPath":"/no/such/file.jsonl"}',
        b'{"type":"bash","command":["ls"]}',
        b'{"type":"bash","command":""}',
        b'{"type":"set_session_name","name":"  "}',
        b'{"type":"export_html","outputPath":5}',
        b'{"type":"compact","customInstructions":{}}',
        b'{"type":"get_state","id":{"nested":true}}',
        b'{"type":"extension_ui_response"}',
        b'{"type":"extension_ui_response","id":1}',
        b'{"type":"__proto__"}',
        b'{"type":"constructor"}',
        b'{"type":"prompt\\u0000"}',
        b'{"type":"steer"}',
        b'{"type":"follow_up","message":false}',
        b'{"type":"get_state"} trailing',
        b'{"type":"get_state",}',
        b"NaN",
        b"{'type':'get_state'}",
    ]
    lines = list(fixed)
    while len(lines) < count:
        kind = rng.randrange(4)
        if kind == 0:  # random bytes
            lines.append(
                bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b" ")
            )
        elif kind == 1:  # unknown commands
            lines.append(
                json.dumps({"type": f"cmd_{rng.randrange(10**9)}", "id": f"h{len(lines)}"}).encode()
            )
        elif kind == 2:  # wrong field types
            field, value = rng.choice(
                [("message", 1), ("message", None), ("message", [1]), ("images", 3)]
            )
            lines.append(
                json.dumps(
                    {"type": rng.choice(["prompt", "steer", "follow_up"]), field: value}
                ).encode()
            )
        else:  # truncated JSON
            text = json.dumps({"type": "get_state", "id": "t" * rng.randrange(50)})
            lines.append(text[: rng.randrange(1, len(text) - 1)].encode())
    return lines[:count]


async def test_a_thousand_hostile_lines_while_a_prompt_runs(rpc: Rpc) -> None:
    rpc.server.add(rpc.gate_reply(), text_reply("survived"))
    client = await rpc.start()
    mark = client.mark()
    await client.prompt("keep working")
    await client.wait_for(is_type("tool_execution_start"), since=mark)
    lines = hostile_lines(1000)
    before = client.mark()
    await client.send_raw(b"".join(line + b"\n" for line in lines))
    state = await client.get_state()  # answered after (or among) the hostile lines: still alive
    assert state["isStreaming"] is True

    def answered() -> int:
        return sum(1 for e in client.history[before:] if e["type"] == "response")

    await client.wait_for(lambda _: answered() >= len(lines), since=before)
    responses = [e for e in client.history[before:] if e["type"] == "response"]
    assert len(responses) == 1000 and all(r["success"] is False and r["error"] for r in responses)
    assert sum(1 for r in responses if r["command"] == "parse") > 250
    assert any("Agent is already processing" in r["error"] for r in responses)
    assert max(len(json.dumps(r)) for r in responses) < 2000  # nothing huge is echoed back

    await rpc.release("gate output")
    settled = await client.wait_for(is_type("agent_settled"), since=mark)
    assert settled["aborted"] is False
    assert await client.get_last_assistant_text() == "survived"
    session_file = state["sessionFile"]
    assert await client.close() == 0
    entries = rpc.session_lines(session_file)
    messages = [e["message"] for e in entries if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert messages[0]["content"] == [
        {"type": "text", "text": "keep working"}
    ] and "gate output" in json.dumps(messages[2])
    assert len(rpc.server.requests) == 2


async def test_end_of_input_aborts_the_running_prompt_and_exits_cleanly(rpc: Rpc) -> None:
    rpc.server.add(rpc.gate_reply())
    client = await rpc.start("-e", str(rpc.plugin("shutdown_plugin", SHUTDOWN_PLUGIN)))
    mark = client.mark()
    await client.prompt("never finishes")
    await client.wait_for(is_type("tool_execution_start"), since=mark)
    session_file = (await client.get_state())["sessionFile"]
    assert await client.close() == 0
    settled = await client.wait_for(is_type("agent_settled"), since=mark)
    assert settled["aborted"] is True
    messages = [e["message"] for e in rpc.session_lines(session_file) if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]
    assert messages[2]["isError"] is True
    assert (rpc.project / "shutdown.log").read_text() == "quit\n"
    assert b"Traceback" not in client.stderr


async def test_sigterm_finishes_like_end_of_input(rpc: Rpc) -> None:
    rpc.server.add(rpc.gate_reply())
    client = await rpc.start("-e", str(rpc.plugin("shutdown_plugin", SHUTDOWN_PLUGIN)))
    mark = client.mark()
    await client.prompt("interrupted")
    await client.wait_for(is_type("tool_execution_start"), since=mark)
    session_file = (await client.get_state())["sessionFile"]
    assert client.process is not None
    client.process.send_signal(signal.SIGTERM)
    assert await client.process.wait() == 0
    assert (await client.wait_for(is_type("agent_settled"), since=mark))["aborted"] is True
    entries = rpc.session_lines(session_file)
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == [
        "user",
        "assistant",
        "toolResult",
    ]
    assert (rpc.project / "shutdown.log").read_text() == "quit\n"
    assert b"Traceback" not in client.stderr


def test_commands_from_a_file_on_stdin(rpc: Rpc) -> None:
    commands = rpc.project.parent / "commands.jsonl"
    commands.write_bytes(
        b'{"id":"1","type":"get_state"}\r\n'
        b"garbage\n"
        b'{"id":"2","type":"set_session_name","name":"from \xe2\x80\xa8 file"}\n'
        b'{"id":"3","type":"get_state"}'  # the last line has no LF
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["KNIGHTCODE_LOAD_PLUGINS"] = ""
    with commands.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "knightcode", "--model", f"{PROVIDER}/{MODEL}", "--mode", "rpc"],
            stdin=stdin,
            capture_output=True,
            cwd=rpc.project,
            env=env,
            timeout=60,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.split(b"\n") if line]
    responses = {r.get("id"): r for r in records if r["type"] == "response"}
    assert responses[None]["command"] == "parse" and responses["1"]["success"] is True
    assert responses["2"]["success"] is True
    assert responses["3"]["data"]["sessionName"] == "from \u2028 file"
    assert {r["type"] for r in records} == {"response", "session_info_changed"}
    assert result.stderr == b""


NOISY_PLUGIN = """
import os
import sys

from knightcode import hookimpl


@hookimpl
def session_start(ctx):
    print("plugin noise on stdout")
    sys.stdout.flush()
    os.system("echo child noise")
"""


async def test_stdout_carries_only_records(rpc: Rpc) -> None:
    client = await rpc.start("-e", str(rpc.plugin("noisy", NOISY_PLUGIN)))
    await client.get_state()
    assert await client.close() == 0
    assert client.stray_lines == []
    assert b"plugin noise on stdout" in client.stderr and b"child noise" in client.stderr
