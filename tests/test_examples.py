"""Every example in plugins_examples/ loads through the real ``-e`` loader and does its job."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from knightcode.plugins.host import PluginFailure
from knightcode.plugins.planning import HostOptions, create_plugin_host
from knightcode.plugins.records import PluginKind

from .conftest import REPO

EXAMPLES = REPO / "plugins_examples"



@pytest.fixture(autouse=True)
def only_the_plugins_under_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about extensions; knightcode's own built-ins would only add rows."""
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "")

def load(agent_dir: Path, project_dir: Path, *paths: Path) -> tuple[object, list[PluginFailure]]:
    failures: list[PluginFailure] = []
    options = HostOptions(cwd=project_dir, agent_dir=agent_dir, extension_paths=paths)
    return create_plugin_host(options, on_failure=failures.append), failures


def test_every_example_is_covered() -> None:
    examples = sorted(p.name for p in EXAMPLES.iterdir() if not p.name.startswith(("_", ".")))
    assert examples == ["audit_log", "hello_command.py"], "add a test for the new example"


async def test_hello_command(agent_dir: Path, project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host, failures = load(agent_dir, project_dir, EXAMPLES / "hello_command.py")
    assert failures == []
    record = host.records[0]  # type: ignore[attr-defined]
    assert record.kind is PluginKind.CLI and record.enabled
    command = host.registrations.commands.get("hello")  # type: ignore[attr-defined]
    assert command is not None and command.description == "Say hello"

    assert await command.handler("Ada", host.context) == "Hello, Ada!"  # type: ignore[attr-defined]
    assert "info: Hello, Ada!" in capsys.readouterr().err
    host.flag_values["hello-name"] = "Grace"  # type: ignore[attr-defined]
    assert await command.handler("", host.context) == "Hello, Grace!"  # type: ignore[attr-defined]

    blocked = await host.emit("tool_call", tool_call_id="1", tool_name="bash", input={"command": "rm -rf / "})  # type: ignore[attr-defined]
    assert blocked["block"] is True
    allowed = await host.emit("tool_call", tool_call_id="2", tool_name="bash", input={"command": "rm -rf ./build"})  # type: ignore[attr-defined]
    assert allowed is None


async def test_audit_log_folder_extension(agent_dir: Path, project_dir: Path) -> None:
    host, failures = load(agent_dir, project_dir, EXAMPLES / "audit_log")
    assert failures == []
    await host.emit("session_start", reason="startup", previous_session_file=None)  # type: ignore[attr-defined]
    await host.emit("tool_execution_end", tool_call_id="c1", tool_name="read", args={}, result={}, is_error=False)  # type: ignore[attr-defined]
    log = agent_dir / "audit.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["event"], r.get("tool")) for r in records] == [("session_start", None), ("tool", "read")]
    assert log.stat().st_mode & 0o777 == 0o600


def test_examples_flags_show_in_help(knightcode_exe: list[str]) -> None:
    result = subprocess.run(
        [*knightcode_exe, "-e", str(EXAMPLES / "hello_command.py"), "-e", str(EXAMPLES / "audit_log"), "--help"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--hello-name VALUE" in result.stdout and "--audit-log VALUE" in result.stdout
    assert result.stderr == ""
