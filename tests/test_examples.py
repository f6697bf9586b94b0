"""Every example in plugins_examples/ loads through the real ``-e`` loader and does its job."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from knightcode import (
    AbortSignal,
    Block,
    CompactionOverride,
    CompactionPreparation,
    CompactionSettings,
    FileOperations,
    ToolContext,
)
from knightcode._plugins.host import PluginFailure, PluginHost
from knightcode._plugins.planning import HostOptions, create_plugin_host
from knightcode._plugins.records import PluginKind

from .conftest import REPO

EXAMPLES = REPO / "plugins_examples"


@pytest.fixture(autouse=True)
def only_the_plugins_under_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about extensions; knightcode's own built-ins would only add rows."""
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "")


def load(
    agent_dir: Path, project_dir: Path, *paths: Path
) -> tuple[PluginHost, list[PluginFailure]]:
    failures: list[PluginFailure] = []
    options = HostOptions(cwd=project_dir, agent_dir=agent_dir, extension_paths=paths)
    return create_plugin_host(options, on_failure=failures.append), failures


def test_every_example_is_covered() -> None:
    examples = sorted(p.name for p in EXAMPLES.iterdir() if not p.name.startswith(("_", ".")))
    assert examples == [
        "audit_log",
        "custom_compaction.py",
        "hello_command.py",
        "line_count.py",
    ], "add a test for the new example"


async def test_hello_command(
    agent_dir: Path, project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    host, failures = load(agent_dir, project_dir, EXAMPLES / "hello_command.py")
    assert failures == []
    record = host.records[0]
    assert record.kind is PluginKind.CLI and record.enabled
    command = host.registrations.commands.get("hello")
    assert command is not None and command.description == "Say hello"

    assert await command.handler("Ada", host.context) == "Hello, Ada!"
    assert "info: Hello, Ada!" in capsys.readouterr().err
    host.flag_values["hello-name"] = "Grace"
    assert await command.handler("", host.context) == "Hello, Grace!"

    blocked = await host.hooks.tool_call(
        tool_call_id="1", tool_name="bash", input={"command": "rm -rf / "}
    )
    assert blocked == Block("hello_command: refusing to delete from the filesystem root")
    allowed = await host.hooks.tool_call(
        tool_call_id="2", tool_name="bash", input={"command": "rm -rf ./build"}
    )
    assert allowed is None


async def test_audit_log_folder_extension(agent_dir: Path, project_dir: Path) -> None:
    host, failures = load(agent_dir, project_dir, EXAMPLES / "audit_log")
    assert failures == []
    await host.hooks.session_start(reason="startup", previous_session_file=None)
    await host.hooks.tool_execution_end(
        tool_call_id="c1", tool_name="read", result={"content": []}, is_error=False
    )
    log = agent_dir / "audit.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["event"], r.get("tool")) for r in records] == [
        ("session_start", None),
        ("tool", "read"),
    ]
    assert log.stat().st_mode & 0o777 == 0o600


async def test_line_count_works_through_its_context(agent_dir: Path, project_dir: Path) -> None:
    """On the local backend here; tests/sandbox/test_sandbox_e2e.py runs it inside sandboxes."""
    host, failures = load(agent_dir, project_dir, EXAMPLES / "line_count.py")
    assert failures == []
    tool = host.registrations.tools.get("line_count")
    assert tool is not None and tool.host_access is False
    (project_dir / "two.txt").write_text("a\nb\n")
    ctx = ToolContext.local(project_dir)
    result = await tool.execute("c1", {"paths": ["two.txt"]}, ctx, None)
    text = result["content"][0]["text"]
    assert text.startswith("2 two.txt") and f"(counted in {project_dir})" in text
    with pytest.raises(ValueError, match="at least one path"):
        await tool.execute("c2", {"paths": []}, ctx, None)


def test_examples_flags_show_in_help(knightcode_exe: list[str]) -> None:
    result = subprocess.run(
        [
            *knightcode_exe,
            "-e",
            str(EXAMPLES / "hello_command.py"),
            "-e",
            str(EXAMPLES / "audit_log"),
            "--help",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--hello-name VALUE" in result.stdout and "--audit-log VALUE" in result.stdout
    assert result.stderr == ""


async def test_custom_compaction_summarizes_with_another_model(
    agent_dir: Path, project_dir: Path
) -> None:

    from knightcode._llm.registry import ModelRegistry
    from knightcode.testing import ScriptedServer, text_reply, usage

    host, failures = load(agent_dir, project_dir, EXAMPLES / "custom_compaction.py")
    assert failures == []
    flag = host.registrations.flags.get("compaction-model")
    assert flag is not None and flag.type == "string"
    with ScriptedServer(models=("cheap",)) as server:
        (agent_dir / "models.json").write_text(
            json.dumps(
                {
                    "providers": {
                        "scripted": {
                            "baseUrl": server.base_url,
                            "api": "openai-completions",
                            "models": [{"id": "cheap"}],
                        }
                    }
                }
            )
        )
        registry = ModelRegistry(agent_dir)
        host.context.bind_models(registry)
        preparation = CompactionPreparation(
            first_kept_entry_id="abc",
            messages_to_summarize=[{"role": "user", "content": "fix the parser", "timestamp": 0}],
            turn_prefix_messages=[],
            is_split_turn=False,
            tokens_before=9000,
            previous_summary="earlier work",
            file_ops=FileOperations(),
            settings=CompactionSettings(),
        )
        arguments = dict(
            preparation=preparation,
            branch_entries=[],
            custom_instructions=None,
            reason="threshold",
            will_retry=False,
            signal=AbortSignal(),
        )
        assert await host.hooks.session_before_compact(**arguments) is None
        host.flag_values["compaction-model"] = "scripted/cheap"
        server.add(text_reply("## Parser work", usage=usage(input=40, output=5)))
        answer = await host.hooks.session_before_compact(**arguments)
        await registry.aclose()
        (request,) = [r for r in server.requests if r.method == "POST"]
    assert isinstance(answer, CompactionOverride)
    assert answer.summary == "## Parser work" and answer.first_kept_entry_id == "abc"
    assert answer.tokens_before == 9000
    assert answer.usage is not None and answer.usage["totalTokens"] == 45
    text = request.body["messages"][-1]["content"][0]["text"]
    assert (
        request.body["model"] == "cheap"
        and "[User]: fix the parser" in text
        and "earlier work" in text
    )
