"""Hooks that hang or print, in RPC mode: ``abort`` is answered promptly while a plugin's handler
blocks the loop or waits, SIGTERM still ends the process, dialogs do not count against the hook
deadline, and plugin output never reaches the protocol stream.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.noisy_plugin import NOISE, NOISY

from .conftest import Rpc, is_type

HANGING = """
import asyncio, pathlib, time
from knightcode import hookimpl

@hookimpl
{prefix}def {hook}(ctx):
    pathlib.Path("started").touch()
    {wait}
"""

WAITS = {"sync": "time.sleep(1000)", "async": "await asyncio.sleep(1000)"}


def hanging(rpc: Rpc, hook: str, how: str) -> Path:
    prefix = "async " if how == "async" else ""
    source = HANGING.format(prefix=prefix, hook=hook, wait=WAITS[how])
    return rpc.plugin(f"hanging_{hook}_{how}", source)


async def started(rpc: Rpc) -> None:
    marker = rpc.project / "started"
    for _ in range(1000):
        if marker.exists():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the hook never started")


@pytest.mark.parametrize(
    ("hook", "how"),
    [("tool_call", "sync"), ("tool_call", "async"), ("context", "sync"), ("input", "sync")],
)
async def test_abort_is_answered_promptly_while_a_hook_hangs(rpc: Rpc, hook: str, how: str) -> None:
    rpc.server.add(tool_call_reply([tool_call("c1", "bash", {"command": "echo hi"})]))
    client = await rpc.start("-e", str(hanging(rpc, hook, how)))
    mark = client.mark()
    await client.prompt("hi")
    await started(rpc)
    sent = time.monotonic()
    response = await client.send({"type": "abort"}, timeout=10)
    assert response["success"] is True
    assert time.monotonic() - sent < 2
    settled = await client.wait_for(is_type("agent_settled"), since=mark)
    assert settled["aborted"] is True
    state = await client.get_state()  # the loop is free again
    assert state["isStreaming"] is False
    assert await client.close() == 0
    assert b"Traceback" not in client.stderr and client.stray_lines == []


@pytest.mark.parametrize("how", ["sync", "async"])
async def test_sigterm_ends_rpc_while_a_hook_hangs(rpc: Rpc, how: str) -> None:
    rpc.server.add(tool_call_reply([tool_call("c1", "bash", {"command": "echo hi"})]))
    client = await rpc.start("-e", str(hanging(rpc, "tool_call", how)))
    session_file = (await client.get_state())["sessionFile"]
    mark = client.mark()
    await client.prompt("hi")
    await started(rpc)
    assert client.process is not None
    sent = time.monotonic()
    client.process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(client.process.wait(), 10) == 0
    assert time.monotonic() - sent < 3
    assert (await client.wait_for(is_type("agent_settled"), since=mark))["aborted"] is True
    messages = [e for e in rpc.session_lines(session_file) if e["type"] == "message"]
    assert [m["message"]["role"] for m in messages] == ["user", "assistant", "toolResult"]


ASKING = """
from knightcode import Block, hookimpl

@hookimpl
async def tool_call(ctx):
    if await ctx.ui.confirm("Run it?", "the user takes their time"):
        return Block("the user said no by saying yes")
"""


async def test_time_in_a_dialog_does_not_count_against_the_deadline(rpc: Rpc) -> None:
    (rpc.agent_dir / "settings.json").write_text(json.dumps({"hookTimeoutMs": 300}))
    rpc.server.add(
        tool_call_reply([tool_call("c1", "bash", {"command": "echo ran"})]), text_reply("ok")
    )
    client = await rpc.start("-e", str(rpc.plugin("asking", ASKING)))
    mark = client.mark()
    await client.prompt("hi")
    request = await client.wait_for(
        lambda r: r["type"] == "extension_ui_request" and r["method"] == "confirm", since=mark
    )
    await asyncio.sleep(1.0)  # thinking, three deadlines long
    await client.respond_ui(request["id"], confirmed=True)
    await client.wait_for(is_type("agent_settled"), since=mark)
    assert await client.close() == 0
    events = client.history[mark:]
    assert not [e for e in events if e["type"] == "extension_error"]
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert end["result"]["content"][0]["text"] == "the user said no by saying yes"


async def test_a_waiting_hook_past_the_deadline_is_an_extension_error(rpc: Rpc) -> None:
    (rpc.agent_dir / "settings.json").write_text(json.dumps({"hookTimeoutMs": 300}))
    rpc.server.add(text_reply("ok"))
    path = hanging(rpc, "before_agent_start", "async")
    client = await rpc.start("-e", str(path))
    events = await client.prompt_and_wait("hi")
    errors = [e for e in events if e["type"] == "extension_error"]
    assert errors == [
        {
            "type": "extension_error",
            "extensionPath": str(path),
            "event": "before_agent_start",
            "error": "HookTimeout: did not answer within 0.3 s (hookTimeoutMs)",
        }
    ]
    assert await client.get_last_assistant_text() == "ok"


async def test_plugin_output_never_reaches_the_rpc_stream(rpc: Rpc) -> None:
    rpc.server.add(text_reply("ok"))
    client = await rpc.start("-e", str(rpc.plugin("noisy", NOISY)))
    events = await client.prompt_and_wait("hi")
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    assert await client.close() == 0
    assert client.stray_lines == []
    for text in NOISE:
        assert text.encode() in client.stderr
