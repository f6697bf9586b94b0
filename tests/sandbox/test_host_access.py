"""``ToolDefinition(host_access=True)``: the one way for a plugin tool to leave the sandbox, and
``knightcode config list`` shows who took it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted

from .conftest import factory

PLUGIN = textwrap.dedent(
    """
    from knightcode import ToolDefinition, hookimpl

    async def where(call_id, args, ctx, on_update):
        result = await ctx.run("pwd")
        text = f"cwd={ctx.cwd} pwd={result.output.decode().strip()}"
        return {"content": [{"type": "text", "text": text}], "details": None}

    SCHEMA = {"type": "object", "properties": {}}

    @hookimpl
    def register_tools(register):
        register(ToolDefinition("host_where", "where on the host", SCHEMA, where,
                                host_access=True))
        register(ToolDefinition("inside_where", "where inside", SCHEMA, where))
    """
)


def write_plugin(tmp_path: Path) -> Path:
    path = tmp_path / "whereabouts.py"
    path.write_text(PLUGIN)
    return path


def test_config_list_names_tools_with_host_access(scripted: Scripted, tmp_path: Path) -> None:
    plugin = write_plugin(tmp_path)

    def config_list(*extra: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "knightcode", "config", "list", "-e", str(plugin), *extra],
            cwd=scripted.project,
            env=scripted.env(),
            capture_output=True,
            text=True,
            check=True,
        )
        return result.stdout

    table = " ".join(config_list().split())  # the table wraps to the width it finds
    assert "host access: host_where (runs outside any sandbox)" in table
    assert "inside_where" not in table
    records = {record["name"]: record for record in json.loads(config_list("--json"))}
    (record,) = [r for name, r in records.items() if "whereabouts" in name]
    assert record["hostAccess"] == ["host_where"]
    assert all("hostAccess" not in r for name, r in records.items() if r is not record)


def test_only_the_host_access_tool_runs_on_the_host(scripted: Scripted, tmp_path: Path) -> None:
    factory("bwrap")
    plugin = write_plugin(tmp_path)
    scripted.server.add(
        tool_call_reply([tool_call("c1", "host_where", {}), tool_call("c2", "inside_where", {})]),
        text_reply("ok"),
    )
    records, result = scripted.run_json("--sandbox", "bwrap", "-e", str(plugin), "-p", "go")
    assert result.returncode == 0, result.stderr
    ends = {r["toolCallId"]: r for r in records if r["type"] == "tool_execution_end"}
    host = str(scripted.project.resolve())
    assert ends["c1"]["result"]["content"][0]["text"] == f"cwd={host} pwd={host}"
    assert ends["c2"]["result"]["content"][0]["text"] == "cwd=/workspace pwd=/workspace"
