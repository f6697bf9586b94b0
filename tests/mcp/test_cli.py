"""``knightcode mcp list``, ``/mcp`` and project trust, with the real executable and a real
stdio server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)

from .conftest import stdio_entry, write_mcp_json


def knightcode(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knightcode", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=90,
        check=False,
    )


def test_list_shows_status_tools_and_errors(agent_dir: Path) -> None:
    write_mcp_json(
        agent_dir,
        {
            "calc": stdio_entry(),
            "broken": stdio_entry("crash", timeout=5),
            "off": {"url": "http://127.0.0.1:9/mcp", "enabled": False},
        },
    )
    done = knightcode("mcp", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["calc"]["status"] == "ready" and rows["calc"]["error"] is None
    assert rows["calc"]["tools"] == [
        "mcp__calc__add",
        "mcp__calc__echo",
        "mcp__calc__pixel",
        "mcp__calc__die",
    ]
    assert rows["broken"]["status"] == "failed"
    assert "cannot start: missing config" in rows["broken"]["error"]
    assert (rows["off"]["status"], rows["off"]["tools"]) == ("disabled", [])
    text = knightcode("mcp", "list")
    assert text.returncode == 0
    assert (
        "calc [ready] stdio" in text.stdout and "  mcp__calc__add  Add two integers." in text.stdout
    )


def test_list_reports_a_config_error_without_a_traceback(agent_dir: Path) -> None:
    (agent_dir / "mcp.json").write_text('{"mcpServers": {"x": {"command": 1}}}')
    done = knightcode("mcp", "list")
    assert done.returncode == 1
    assert done.stderr == (
        f"knightcode: error: {agent_dir / 'mcp.json'}: mcpServers.x.command: "
        "must be a non-empty string\n"
    )


def test_mcp_command_shows_servers(scripted: Scripted) -> None:  # noqa: F811
    write_mcp_json(scripted.agent_dir, {"calc": stdio_entry()})
    _, result = scripted.run_json("/mcp")
    assert result.returncode == 0, result.stderr
    # Start-up does not wait on a server never listed: it is still starting.
    assert "calc [starting] stdio" in result.stderr
    # A run waits for its list (and caches it); the next start offers the cached tools.
    scripted.server.add(text_reply("ok"))
    _, result = scripted.run_json("hi")
    assert result.returncode == 0, result.stderr
    _, result = scripted.run_json("/mcp")
    assert "MCP servers (1):\n  calc [idle] stdio" in result.stderr and "4 tools" in result.stderr
    assert "mcp__calc__echo" in result.stderr


def test_untrusted_project_servers_are_ignored_until_trusted(scripted: Scripted) -> None:  # noqa: F811
    config = scripted.project / ".knightcode"
    config.mkdir()
    (config / "mcp.json").write_text(
        json.dumps({"mcpServers": {"proj": stdio_entry(env={"TEST_TOKEN": "p"})}})
    )
    scripted.server.add(text_reply("Nothing."))
    _, result = scripted.run_json("Hello")
    assert result.returncode == 0, result.stderr
    assert "mcp.json is ignored: the project is not trusted" in result.stderr
    body = scripted.server.requests[0].body
    assert isinstance(body, dict)
    assert not [t for t in body.get("tools", []) if t["function"]["name"].startswith("mcp__")]
    listed = knightcode("mcp", "list", "--json")
    assert json.loads(listed.stdout) == []
    # The project's server was never started (a started stdio server gets a log file).
    assert not (scripted.agent_dir / "mcp" / "logs" / "proj.log").exists()

    trusted = knightcode("trust")
    assert trusted.returncode == 0, trusted.stderr
    listed = knightcode("mcp", "list", "--json")
    assert [row["name"] for row in json.loads(listed.stdout)] == ["proj"]
    scripted.server.add(
        tool_call_reply([tool_call("c1", "mcp__proj__echo", {"text": "yo"})]),
        text_reply("Done."),
    )
    records, result = scripted.run_json("Echo")
    assert result.returncode == 0, result.stderr
    (end,) = [r for r in records if r["type"] == "tool_execution_end"]
    assert end["isError"] is False
    assert end["result"]["content"] == [{"type": "text", "text": "yo token=p"}]
