"""stdio MCP servers run through the session's execution backend: under ``--sandbox bwrap``
the server's command runs inside the sandbox (cwd ``/workspace``, host files outside the
project out of sight, the sandbox's environment plus mcp.json's ``env``), and ``"sandbox":
false`` runs it on this machine. The real executable, real bwrap, a real SDK server.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)

from .conftest import write_mcp_json

REPO = Path(__file__).resolve().parents[2]
WHERE = str(Path(__file__).with_name("where_server.py"))


def _settings(s: Scripted) -> None:
    # The test's Python and the repository (its venv holds the SDK) are bound read-only, as a
    # user binds a tool prefix; nothing else of the host's home is inside.
    binds = sorted({str(REPO), sys.prefix, sys.base_prefix})
    settings = {
        "retry": {"baseDelayMs": 10},
        "sandbox": {"backend": "bwrap", "bwrap": {"roBinds": binds}},
    }
    (s.agent_dir / "settings.json").write_text(json.dumps(settings))


def _where(records: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    (end,) = [
        r for r in records if r["type"] == "tool_execution_end" and r["toolCallId"] == call_id
    ]
    assert end["isError"] is False, end
    text = "".join(block.get("text", "") for block in end["result"]["content"])
    data: dict[str, Any] = json.loads(text)
    return data


def test_stdio_server_runs_inside_bwrap_and_opt_out_on_host(
    scripted: Scripted,  # noqa: F811
    tmp_path: Path,
) -> None:
    _settings(scripted)
    outside = tmp_path / f"outside-{secrets.token_hex(4)}"
    outside.write_text("host only")
    entry = {"command": sys.executable, "args": [WHERE], "env": {"TEST_TOKEN": "${MY_TOKEN}"}}
    write_mcp_json(scripted.agent_dir, {"boxed": entry, "hosted": {**entry, "sandbox": False}})
    for _ in range(2):  # the first run lists the tools; the second starts from the cache
        scripted.server.add(
            tool_call_reply(
                [
                    tool_call("in", "mcp__boxed__where", {"path": str(outside)}),
                    tool_call("out", "mcp__hosted__where", {"path": str(outside)}),
                ]
            ),
            text_reply("Done."),
        )
        records, result = scripted.run_json("--sandbox", "bwrap", "Where?", MY_TOKEN="s3cret")
        assert result.returncode == 0, result.stderr
        inside, host = _where(records, "in"), _where(records, "out")
        assert inside["cwd"] == "/workspace"
        assert inside["exists"] is False  # a host file outside the project is not there
        assert inside["token"] == "s3cret"  # mcp.json's env reaches the server inside
        assert inside["home"] == "/tmp" and inside["user"] is None  # the sandbox's variables
        assert host["cwd"] == str(scripted.project.resolve()) or host["cwd"] == str(
            scripted.project
        )
        assert host["exists"] is True and host["token"] == "s3cret"


def test_mcp_list_starts_stdio_servers_in_the_sandbox_of_the_settings(
    scripted: Scripted,  # noqa: F811
) -> None:
    _settings(scripted)
    # The server starts only where /workspace exists: inside the sandbox, not on this machine.
    inside_only = {
        "command": "sh",
        "args": ["-c", f'test -d /workspace && exec "{sys.executable}" "{WHERE}"'],
        "timeout": 20,
    }
    write_mcp_json(
        scripted.agent_dir, {"boxed": inside_only, "hosted": {**inside_only, "sandbox": False}}
    )

    def listed(*flags: str) -> dict[str, str]:
        done = subprocess.run(
            [sys.executable, "-m", "knightcode", "mcp", "list", "--json", *flags],
            cwd=scripted.project,
            env=scripted.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return {row["name"]: row["status"] for row in json.loads(done.stdout)}

    assert listed() == {"boxed": "ready", "hosted": "failed"}
    assert listed("--sandbox", "local") == {"boxed": "failed", "hosted": "failed"}
