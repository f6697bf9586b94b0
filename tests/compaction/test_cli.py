"""The real executable: JSON mode recovers from an overflow through ``builtin:compaction``; with
the plugin disabled (``knightcode config disable builtin:compaction`` or ``-builtin:compaction``
in settings) there is no compaction at all and a manual one is refused. ``/compact`` is the
plugin's command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from knightcode._agent.session import CompactionUnavailableError
from knightcode.testing import ScriptedServer, error_reply, text_reply, usage
from tests.harness import (
    PROVIDER,
    SMALL,
    Builder,
    bounded,
    summary_reply,
    write_config,
)

OVERFLOW = "prompt is too long: 12000 tokens > 10000 maximum"
SETTINGS = {"compaction": {"reserveTokens": 2000, "keepRecentTokens": 100}}


def knightcode(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knightcode", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def json_run(
    project: Path, prompt: str
) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    result = knightcode(project, "--model", f"{PROVIDER}/{SMALL}", "--mode", "json", prompt)
    return [json.loads(line) for line in result.stdout.split("\n") if line], result


def test_json_mode_recovers_from_an_overflow(
    server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    write_config(agent_dir, server.base_url, SETTINGS)
    server.add(
        error_reply(400, OVERFLOW), summary_reply(), text_reply("fits now", usage=usage(input=300))
    )
    records, result = json_run(project_dir, "count to a million")
    assert result.returncode == 0, result.stderr
    kinds = [
        r["type"]
        for r in records
        if r["type"] in ("agent_end", "compaction_start", "compaction_end", "agent_settled")
    ]
    assert kinds == [
        "agent_end",
        "compaction_start",
        "compaction_end",
        "agent_end",
        "agent_settled",
    ]
    end = next(r for r in records if r["type"] == "compaction_end")
    assert (
        end["reason"] == "overflow"
        and end["willRetry"] is True
        and end["result"]["usage"]["totalTokens"] == 550
    )
    (session_file,) = (agent_dir / "sessions").rglob("*.jsonl")
    types = [json.loads(line)["type"] for line in session_file.read_text().splitlines()]
    assert types[-3:] == ["context_edit", "compaction", "message"]


def test_config_disable_turns_compaction_off(
    server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    write_config(agent_dir, server.base_url, SETTINGS)
    disabled = knightcode(project_dir, "config", "disable", "builtin:compaction")
    assert disabled.returncode == 0, disabled.stderr
    listing = json.loads(knightcode(project_dir, "config", "list", "--json").stdout)
    assert {r["name"]: r["status"] for r in listing}["builtin:compaction"] == "disabled"
    server.add(error_reply(400, OVERFLOW), text_reply("never sent"))
    records, result = json_run(project_dir, "count to a million")
    assert result.returncode == 1  # the run ends with the provider's error
    assert [r for r in records if r["type"].startswith("compaction")] == []
    assert [r["willRetry"] for r in records if r["type"] == "agent_end"] == [False]
    assert len([r for r in server.requests if r.method == "POST"]) == 1


async def test_a_manual_compaction_without_the_plugin_is_refused(build: Builder) -> None:
    run = await build(settings={**SETTINGS, "extensions": ["-builtin:compaction"]})
    assert run.host.record("builtin:compaction").status.value == "disabled"  # type: ignore[union-attr]
    assert run.host.registrations.commands.get("compact") is None
    with pytest.raises(CompactionUnavailableError, match="compaction is disabled"):
        await run.agent.compact()
    run.server.add(text_reply("answer", usage=usage(input=9500)))
    await bounded(run.agent.prompt("question"))  # over the threshold, but nobody compacts
    assert run.of_type("compaction_start") == []


async def test_the_compact_command(build: Builder, capsys: pytest.CaptureFixture[str]) -> None:
    run = await build(settings=SETTINGS)
    command = run.host.registrations.commands.get("compact")
    assert command is not None and "focuses the summary" in command.description
    run.server.add(text_reply("answer", usage=usage(input=100)))
    await bounded(run.agent.prompt("question " + "q" * 600))
    run.server.add(summary_reply())
    text = await bounded(command.handler("  keep the API notes ", run.host.context))
    tokens_before = run.entries("compaction")[0]["tokensBefore"]
    assert text.startswith(f"Compacted: {tokens_before} tokens before, about ")
    assert run.prompt_text(1).endswith("Additional focus: keep the API notes")
    assert f"info: {text}" in capsys.readouterr().err
    again = await bounded(command.handler("", run.host.context))
    assert again == "Compaction failed: Already compacted"
    assert "error: Compaction failed: Already compacted" in capsys.readouterr().err


async def test_rpc_compact_and_the_slash_command(
    server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    import os

    from knightcode.rpc import Client, RpcError
    from tests.harness import SUMMARY

    write_config(agent_dir, server.base_url, SETTINGS)
    env = {k: v for k, v in os.environ.items() if k != "KNIGHTCODE_LOAD_PLUGINS"}  # built-ins load
    async with Client(
        ["--model", f"{PROVIDER}/{SMALL}", "--no-session"], env=env, cwd=project_dir, timeout=30
    ) as client:
        server.add(text_reply("answer", usage=usage(input=100)))
        await client.prompt_and_wait("question " + "q" * 600)
        server.add(summary_reply())
        result = await client.compact("keep the API notes")
        assert result is not None and result["summary"] == SUMMARY and result["tokensBefore"] == 100
        prompts = [r for r in server.requests if r.method == "POST"]
        assert (
            prompts[-1]
            .body["messages"][-1]["content"][0]["text"]
            .endswith("Additional focus: keep the API notes")
        )
        assert [e["type"] for e in client.history if e["type"].startswith("compaction")] == [
            "compaction_start",
            "compaction_end",
        ]
        # The plugin's /compact command, sent as a prompt.
        server.add(text_reply("more", usage=usage(input=100)))
        await client.prompt_and_wait("another question " + "a" * 600)
        server.add(summary_reply("## Goal\nby command"))
        mark = len(client.history)
        await client.prompt("/compact the command focus")
        end = await client.wait_for(lambda e: e["type"] == "compaction_end", since=mark)
        assert end["reason"] == "manual" and end["result"]["summary"] == "## Goal\nby command"

    (agent_dir / "settings.json").write_text(
        json.dumps({**SETTINGS, "extensions": ["-builtin:compaction"]})
    )
    async with Client(
        ["--model", f"{PROVIDER}/{SMALL}", "--no-session"], env=env, cwd=project_dir, timeout=30
    ) as client:
        with pytest.raises(RpcError, match="compaction is disabled"):
            await client.compact()
