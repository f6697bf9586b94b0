"""builtin:mcp end to end: the real executable in ``--mode json`` against the scripted model
server, with real MCP servers (``server.py``, written with the SDK) over stdio and streamable
HTTP; the model calls their tools. Misbehaving servers (crash at start, hang, die mid-call) are
reported while the agent carries on."""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)

from .conftest import SERVER, http_server, stdio_entry, write_mcp_json  # noqa: F401 (the fixture)


def _tool_ends(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["toolCallId"]: r for r in records if r["type"] == "tool_execution_end"}


def _offered(run: Scripted) -> set[str]:
    body = run.server.requests[0].body
    assert isinstance(body, dict)
    return {t["function"]["name"] for t in body.get("tools", [])}


def test_stdio_server_tools_called_by_the_model(scripted: Scripted) -> None:  # noqa: F811
    write_mcp_json(
        scripted.agent_dir,
        {"calc": stdio_entry(env={"TEST_TOKEN": "${MY_TOKEN}"})},
    )
    scripted.server.add(
        tool_call_reply(
            [
                tool_call("c1", "mcp__calc__add", {"a": 2, "b": 40}),
                tool_call("c2", "mcp__calc__echo", {"text": "hi"}),
                tool_call("c3", "mcp__calc__pixel", {}),
            ]
        ),
        text_reply("Done."),
    )
    records, result = scripted.run_json("Use the calculator", MY_TOKEN="s3cret")
    assert result.returncode == 0, result.stderr
    assert {"mcp__calc__add", "mcp__calc__echo", "mcp__calc__pixel", "mcp__calc__die"} <= (
        _offered(scripted)
    )
    ends = _tool_ends(records)
    assert ends["c1"]["isError"] is False
    assert ends["c1"]["result"]["content"] == [{"type": "text", "text": "42"}]
    assert ends["c1"]["result"]["details"]["structured"] == {"result": 42}
    assert ends["c2"]["result"]["content"] == [{"type": "text", "text": "hi token=s3cret"}]
    (image,) = ends["c3"]["result"]["content"]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    # The schema reached the model as the server wrote it.
    body = scripted.server.requests[0].body
    assert isinstance(body, dict)
    (add,) = [t for t in body["tools"] if t["function"]["name"] == "mcp__calc__add"]
    assert set(add["function"]["parameters"]["properties"]) == {"a", "b"}
    # The tool list is cached for the next start.
    cache = json.loads((scripted.agent_dir / "mcp" / "tools-cache.json").read_text())
    assert [t["name"] for t in cache["calc"]["tools"]] == ["add", "echo", "pixel", "die"]


def test_http_server_tools_called_by_the_model(
    scripted: Scripted,  # noqa: F811
    http_server: str,  # noqa: F811
) -> None:
    write_mcp_json(scripted.agent_dir, {"remote": {"url": http_server, "headers": {"X-Test": "1"}}})
    scripted.server.add(
        tool_call_reply([tool_call("c1", "mcp__remote__add", {"a": 1, "b": 1})]),
        text_reply("Two."),
    )
    records, result = scripted.run_json("Add over HTTP")
    assert result.returncode == 0, result.stderr
    ends = _tool_ends(records)
    assert ends["c1"]["isError"] is False
    assert ends["c1"]["result"]["content"] == [{"type": "text", "text": "2"}]


def test_failing_servers_are_reported_and_the_agent_carries_on(
    scripted: Scripted,  # noqa: F811
) -> None:
    write_mcp_json(
        scripted.agent_dir,
        {
            "good": stdio_entry(),
            "crashes": stdio_entry("crash", timeout=5),
            "hangs": stdio_entry("hang", timeout=2),
        },
    )
    scripted.server.add(
        tool_call_reply([tool_call("c1", "mcp__good__die", {})]),
        tool_call_reply([tool_call("c2", "mcp__good__add", {"a": 3, "b": 4})]),
        text_reply("Carried on."),
    )
    records, result = scripted.run_json("Go")
    assert result.returncode == 0, result.stderr
    # Both broken servers are reported, with why; neither has tools.
    assert "server 'crashes' failed" in result.stderr
    assert "cannot start: missing config" in result.stderr
    assert "server 'hangs' failed: no answer within 2 s" in result.stderr
    assert not {n for n in _offered(scripted) if n.startswith(("mcp__crashes", "mcp__hangs"))}
    ends = _tool_ends(records)
    # The server died in the middle of the call: an error for the model, with its stderr ...
    assert ends["c1"]["isError"] is True
    assert "stopped during the call" in json.dumps(ends["c1"]["result"])
    assert "dying on purpose" in json.dumps(ends["c1"]["result"])
    # ... and the next call starts it again.
    assert ends["c2"]["isError"] is False
    assert ends["c2"]["result"]["content"] == [{"type": "text", "text": "7"}]
    assert records[-2]["type"] == "agent_end"
    # The failures are remembered: the next start does not wait on them.
    cache = json.loads((scripted.agent_dir / "mcp" / "tools-cache.json").read_text())
    assert cache["hangs"]["failed"] == "no answer within 2 s"
    assert "cannot start: missing config" in cache["crashes"]["failed"]


def test_a_failed_server_is_not_waited_on_at_the_next_start(scripted: Scripted) -> None:  # noqa: F811
    # A long timeout: a start that waited on the hanging server would take a minute.
    token = f"hang-{uuid.uuid4().hex}"
    write_mcp_json(
        scripted.agent_dir,
        {"hangs": {**stdio_entry("hang", timeout=60), "args": [SERVER, "hang", token]}},
    )
    cache = scripted.agent_dir / "mcp" / "tools-cache.json"
    cache.parent.mkdir(parents=True)
    fingerprint = json.dumps([sys.executable, SERVER, "hang", token, "", ""])
    cache.write_text(
        json.dumps({"hangs": {"fingerprint": fingerprint, "failed": "no answer", "tools": []}})
    )
    scripted.server.add(text_reply("Fine."))
    started = time.monotonic()
    records, result = scripted.run_json("Hi")
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 30
    assert "server 'hangs' failed last time (no answer); retrying in the background" in (
        result.stderr
    )
    assert records[-2]["type"] == "agent_end"
    # The server still starting when knightcode ended was stopped with it, not left behind.
    assert not _processes_with(token)


def _processes_with(token: str) -> list[str]:
    """Processes whose command line holds ``token``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline:
            found.append(proc.name)
    return found
