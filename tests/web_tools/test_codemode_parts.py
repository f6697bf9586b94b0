"""Codemode's parts on their own — tools as function signatures, the bounded output, the channel
directory, tools.json ``codemode`` — and, in process, an abort reaching a running script and its
nested call, and the interactive transcript fed a ``code`` call's events.
"""

from __future__ import annotations

import asyncio
import json
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from knightcode import ToolContext
from knightcode._modes.interactive.render.options import RenderOptions
from knightcode._modes.interactive.transcript import Transcript
from knightcode._modes.interactive.view import render_live
from knightcode.testing import text_reply, tool_call, tool_call_reply
from knightcode_builtins.web_tools.codemode.channel import Channel
from knightcode_builtins.web_tools.codemode.functions import (
    describe_functions,
    function_name,
    function_spec,
)
from knightcode_builtins.web_tools.codemode.output import BoundedOutput
from knightcode_builtins.web_tools.config import (
    ToolsConfigError,
    parse_tools_config,
    tools_json_path,
    write_tools_json,
)
from tests.harness import Builder, bounded
from tests.interactive.render.support import text as visible_text
from tests.interactive.test_transcript import Recorder

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "What to look for"},
        "path": {"type": "string"},
        "max-count": {"type": "integer"},
        "limit": {"type": "integer", "description": "At most this many\n  matches"},
        "pattern_list": {"type": "array", "items": {"type": "string"}},
        "class": {"type": "string"},
    },
    "required": ["path", "pattern"],
}


def test_a_schema_becomes_a_signature_required_first() -> None:
    spec = function_spec("grep", "Search files.\n\nMore text.", SCHEMA)
    # required first (schema order), then optional; names Python cannot spell are left out
    assert spec.params == ("pattern", "path", "limit", "pattern_list")
    assert spec.signature() == "grep(pattern, path, limit=None, pattern_list=None)"
    assert spec.to_json()["required"] == ["pattern", "path"]
    listing = describe_functions([(spec, SCHEMA)])
    assert listing.startswith(
        "grep(pattern, path, limit=None, pattern_list=None)\n"
        "    Search files.\n"
        "    pattern (string): What to look for\n"
        "    path (string)\n"
        "    limit (integer, optional): At most this many matches\n"
        "    pattern_list (array of string, optional)\n"
        "\n"
        "classify(model, state, questions, temperature=1.0)\n"
    )


def test_tool_names_become_python_names() -> None:
    assert function_name("web-fetch") == "web_fetch"
    assert function_name("mcp.files/read") == "mcp_files_read"
    assert function_name("class") == "class_"
    assert function_name("3d") == "_3d"
    assert function_spec("x", "", {}).signature() == "x()"


def test_output_keeps_the_head_and_the_tail() -> None:
    output = BoundedOutput(20)
    for chunk in (b"0123456789", b"abcdefghij", "KLMNOPQRST\xe9".encode(), b"end"):
        output.feed(chunk[:5])
        output.feed(chunk[5:])  # the é arrives split in two chunks
    text = output.text()
    assert output.truncated and output.total == 34
    assert text.startswith("0123456789\n[… 14 characters of output cut here: 34 in all")
    assert text.endswith("…]\nOPQRST\xe9end")  # the last 10 characters, é decoded whole
    small = BoundedOutput(100)
    small.feed(b"short")
    assert small.text() == "short" and not small.truncated


def test_the_local_channel_is_private_and_removed(tmp_path: Path) -> None:
    channel = Channel.create(ToolContext.local(tmp_path))
    try:
        assert stat.S_IMODE(channel.host_dir.stat().st_mode) == 0o700
        assert channel.agent_dir == str(channel.host_dir)  # no mapping without a sandbox
        channel.write("req-2.json", b'{"op": "call"}')
        channel.write("req-1.json", b"not json")
        channel.write("req-3.json.tmp", b"{}")  # not complete yet: left alone
        assert channel.take_requests() == [(1, None), (2, {"op": "call"})]
        assert sorted(p.name for p in channel.host_dir.iterdir()) == ["req-3.json.tmp"]
        channel.respond(1, {"ok": True, "text": "é"})
        assert json.loads((channel.host_dir / "resp-1.json").read_text()) == {
            "ok": True,
            "text": "é",
        }
    finally:
        channel.close()
    assert not channel.host_dir.exists()


def test_tools_json_codemode_section() -> None:
    config = parse_tools_config({"codemode": {"python": " /usr/bin/python3 ", "timeout": 5}})
    assert (config.codemode.python, config.codemode.timeout) == ("/usr/bin/python3", 5.0)
    assert parse_tools_config({}).codemode.python == "python3"
    with pytest.raises(ToolsConfigError, match=r"tools.json: codemode.python: must name an"):
        parse_tools_config({"codemode": {"python": " "}})
    with pytest.raises(ToolsConfigError, match=r"codemode.maxOutputChars: must be between"):
        parse_tools_config({"codemode": {"maxOutputChars": 10}})


async def test_an_abort_stops_the_script_and_its_nested_call(
    scenario: Builder, agent_dir: Path, project_dir: Path
) -> None:
    write_tools_json(tools_json_path(agent_dir), {"codemode": {"enabled": True}})
    s = await scenario(builtin=["read", "bash"], builtin_plugins=("web-tools",))
    await s.host.hooks.session_start(reason="startup", previous_session_file=None)
    assert s.agent.active_tools == ["code"]
    script = "print('go', flush=True)\nbash('sleep 30; echo late > late.txt')\nprint('never')"
    s.server.add(tool_call_reply([tool_call("c1", "code", {"script": script})]))
    started = asyncio.Event()
    s.agent.subscribe(
        lambda event: (
            started.set()
            if event["type"] == "tool_execution_start" and event.get("parentToolCallId") == "c1"
            else None
        )
    )
    run = asyncio.ensure_future(s.agent.prompt("go"))
    await bounded(started.wait())
    await asyncio.sleep(0.2)  # bash is running its sleep now
    began = time.monotonic()
    s.agent.abort()
    await bounded(run)
    assert time.monotonic() - began < 5
    ends = {e["toolCallId"]: e for e in s.events if e["type"] == "tool_execution_end"}
    assert ends["c1.1"]["isError"] is True and ends["c1.1"]["parentToolCallId"] == "c1"
    assert ends["c1"]["isError"] is True
    text = ends["c1"]["result"]["content"][0]["text"]
    assert text.startswith("go\n") and "never" not in text
    await asyncio.sleep(0.5)
    assert not (project_dir / "late.txt").exists()
    assert not list(project_dir.glob(".knightcode/codemode/*"))


def test_the_transcript_shows_the_scripts_calls_under_the_code_call() -> None:
    recorder = Recorder()
    transcript = Transcript(recorder.emit, recorder.emit, recorder.live, recorder)  # type: ignore[arg-type]
    call = {"type": "toolCall", "id": "c1", "name": "code", "arguments": {"script": "..."}}
    message: Any = {"role": "assistant", "content": [call], "stopReason": "toolUse"}
    events: list[Any] = [
        {"type": "message_start", "message": {**message, "content": []}},
        {"type": "message_end", "message": message},
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "code", "args": {}},
        {
            "type": "tool_execution_start",
            "toolCallId": "c1.1",
            "toolName": "read",
            "args": {"path": "a"},
            "parentToolCallId": "c1",
        },
        {
            "type": "tool_execution_update",
            "toolCallId": "c1",
            "toolName": "code",
            "args": {},
            "partialResult": {"content": [{"type": "text", "text": "read ✓\ngrep …"}]},
        },
        {
            "type": "tool_execution_update",
            "toolCallId": "c1.2",
            "toolName": "grep",
            "args": {},
            "partialResult": {"content": [{"type": "text", "text": "nested output"}]},
            "parentToolCallId": "c1",
        },
        {
            "type": "tool_execution_end",
            "toolCallId": "c1.2",
            "toolName": "grep",
            "result": {"content": []},
            "isError": False,
            "parentToolCallId": "c1",
        },
    ]
    for event in events:
        transcript.on_event(event)
    (turn,) = transcript.turns
    assert turn.running == {"c1"}  # nested ids are not calls of the turn
    live = render_live(turn, RenderOptions(width=80))
    assert live is not None
    shown = visible_text(live)
    assert "read ✓" in shown and "grep …" in shown and "nested output" not in shown
    result = {"role": "toolResult", "toolCallId": "c1", "content": [], "isError": False}
    transcript.on_event({"type": "message_end", "message": result})  # type: ignore[typeddict-item]
    assert transcript.turns == [] and recorder.printed == ["tools:1"]


async def test_switching_codemode_in_a_session(scenario: Builder, agent_dir: Path) -> None:
    from knightcode_builtins.web_tools.codemode.enable import sync_codemode

    s = await scenario(builtin=["read", "bash"], builtin_plugins=("web-tools",))
    await s.host.hooks.session_start(reason="startup", previous_session_file=None)
    ctx = s.host.context
    assert ctx is not None
    assert s.agent.active_tools == ["read", "bash"]  # code is there, but off by default
    assert "code" in {info.name for info in s.agent.available_tools()}
    # /tools flips codemode.enabled: from the next request, code alone
    write_tools_json(tools_json_path(agent_dir), {"codemode": {"enabled": True}})
    sync_codemode(ctx, announce=True)
    assert s.agent.active_tools == ["code"]
    s.agent.set_tool_enabled("grep", True)  # switched on by hand meanwhile: kept
    s.server.add(text_reply("one"))
    await bounded(s.agent.prompt("first"))
    body = s.server.requests[0].body
    assert [tool["function"]["name"] for tool in body["tools"]] == ["code", "grep"]
    system = body["messages"][0]["content"]
    assert "## Codemode functions" in system and "bash(command, timeout=None)" in system
    # a session switch keeps it
    await s.host.hooks.session_start(reason="new", previous_session_file=None)
    assert s.agent.active_tools == ["code", "grep"]
    write_tools_json(tools_json_path(agent_dir), {"codemode": {"enabled": False}})
    sync_codemode(ctx, announce=True)
    assert s.agent.active_tools == ["read", "bash", "grep"]
    s.server.add(text_reply("two"))
    await bounded(s.agent.prompt("second"))
    body = s.server.requests[1].body
    assert [tool["function"]["name"] for tool in body["tools"]] == ["read", "bash", "grep"]
    assert "Codemode functions" not in body["messages"][0]["content"]
