"""Requests made with stored subscription logins: the headers and identity each provider wants,
refresh before expiry, refresh after a 401, a failed refresh, and tokens kept out of session files
and output."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from knightcode._auth.tokens import OAuthTokens
from knightcode._llm.anthropic_oauth import IDENTITY
from knightcode._llm.keys import AuthStorage
from knightcode.testing import ScriptedServer, text_reply, tool_call, tool_call_reply
from tests.auth.conftest import now_ms, read_auth, write_oauth
from tests.auth.fake_oauth import FakeAuthServer

HOUR_MS = 3_600_000


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "knightcode", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _anthropic_models(agent_dir: Path, base_url: str) -> None:
    model = {"id": "claude-test", "contextWindow": 200000, "maxTokens": 8000, "reasoning": False}
    providers = {"anthropic": {"baseUrl": base_url, "models": [model]}}
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))


def _sessions_text(agent_dir: Path) -> str:
    return "".join(p.read_text() for p in (agent_dir / "sessions").rglob("*.jsonl"))


@pytest.fixture
def anthropic_server(agent_dir: Path, fake_auth: FakeAuthServer) -> ScriptedServer:
    server = ScriptedServer(models=("claude-test",)).start()
    _anthropic_models(agent_dir, server.base_url)
    return server


def test_anthropic_subscription_request(
    anthropic_server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    write_oauth(
        agent_dir,
        "anthropic",
        access="sk-ant-oat01-stored",
        refresh="r",
        expires=now_ms() + HOUR_MS,
    )
    anthropic_server.add(text_reply("hello there"))
    with anthropic_server:
        result = _run(project_dir, "-p", "hi", "--model", "anthropic/claude-test")
    assert result.returncode == 0, result.stderr
    assert "hello there" in result.stdout
    (request,) = anthropic_server.requests
    assert request.headers["authorization"] == "Bearer sk-ant-oat01-stored"
    assert "x-api-key" not in request.headers
    assert "oauth-2025-04-20" in request.headers["anthropic-beta"]
    assert "claude-code-20250219" in request.headers["anthropic-beta"]
    assert request.headers["x-app"] == "cli"
    assert isinstance(request.body, dict)
    system = request.body["system"]
    assert system[0]["text"] == IDENTITY
    assert len(system) == 2 and system[1]["text"] != IDENTITY  # knightcode's own prompt follows
    assert "sk-ant-oat01-stored" not in result.stdout + result.stderr + _sessions_text(agent_dir)


def test_an_expired_token_is_refreshed_first(
    anthropic_server: ScriptedServer,
    fake_auth: FakeAuthServer,
    agent_dir: Path,
    project_dir: Path,
) -> None:
    fake_auth.valid_refresh.add("sk-ant-ort01-old")
    write_oauth(
        agent_dir,
        "anthropic",
        access="sk-ant-oat01-old",
        refresh="sk-ant-ort01-old",
        expires=now_ms() - 1000,
    )
    anthropic_server.add(text_reply("fresh"))
    with anthropic_server:
        result = _run(project_dir, "-p", "hi", "--model", "anthropic/claude-test")
    assert result.returncode == 0, result.stderr
    assert fake_auth.refreshes == ["sk-ant-ort01-old"]
    entry = read_auth(agent_dir)["anthropic"]
    assert entry["access"] != "sk-ant-oat01-old" and entry["refresh"] != "sk-ant-ort01-old"
    assert entry["expires"] > now_ms()
    assert stat.S_IMODE((agent_dir / "auth.json").stat().st_mode) == 0o600
    (request,) = anthropic_server.requests
    assert request.headers["authorization"] == f"Bearer {entry['access']}"
    secrets = [entry["access"], entry["refresh"]]
    for secret in secrets:
        assert secret not in result.stdout + result.stderr + _sessions_text(agent_dir)


def test_a_failed_refresh_asks_for_a_new_login(
    anthropic_server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    write_oauth(
        agent_dir,
        "anthropic",
        access="sk-ant-oat01-old",
        refresh="sk-ant-ort01-revoked",
        expires=now_ms() - 1000,
    )
    with anthropic_server:
        result = _run(project_dir, "-p", "hi", "--model", "anthropic/claude-test")
    assert result.returncode != 0
    assert "log in again: /login anthropic" in result.stderr
    assert "refresh token revoked" in result.stderr
    assert "Traceback" not in result.stderr and "sk-ant-ort01-revoked" not in result.stderr
    assert anthropic_server.requests == []
    assert read_auth(agent_dir)["anthropic"]["refresh"] == "sk-ant-ort01-revoked"  # kept


def test_copilot_request_refreshes_after_a_401(
    fake_auth: FakeAuthServer, agent_dir: Path, project_dir: Path
) -> None:
    old = "tid=old;exp=1;proxy-ep=proxy.individual.githubcopilot.com;"
    fake_auth.rejected_tokens.add(old)
    fake_auth.valid_refresh.add("gho_valid")
    write_oauth(
        agent_dir, "github-copilot", access=old, refresh="gho_valid", expires=now_ms() + HOUR_MS
    )
    result = _run(project_dir, "-p", "hi", "--model", "github-copilot/gpt-4.1")
    assert result.returncode == 0, result.stderr
    assert "hi from copilot" in result.stdout
    assert fake_auth.refreshes == ["copilot"]
    first, second = fake_auth.chat_requests
    assert first["headers"]["authorization"] == f"Bearer {old}"
    renewed = read_auth(agent_dir)["github-copilot"]["access"]
    assert renewed != old and second["headers"]["authorization"] == f"Bearer {renewed}"
    headers = second["headers"]
    assert headers["copilot-integration-id"] == "vscode-chat"
    assert headers["editor-version"].startswith("vscode/")
    assert headers["editor-plugin-version"].startswith("copilot-chat/")
    assert headers["x-initiator"] == "user" and headers["openai-intent"] == "conversation-edits"
    assert "gho_valid" not in result.stdout + result.stderr + _sessions_text(agent_dir)


def test_two_processes_refresh_once(fake_auth: FakeAuthServer, agent_dir: Path) -> None:
    """Two stores on one auth.json (as two processes): the lock lets one refresh; the other
    reads its result instead of spending the single-use refresh token again."""
    fake_auth.valid_refresh.add("sk-ant-ort01-shared")
    write_oauth(
        agent_dir,
        "anthropic",
        access="sk-ant-oat01-old",
        refresh="sk-ant-ort01-shared",
        expires=now_ms() - 1000,
    )
    path = agent_dir / "auth.json"

    async def both() -> tuple[str, str]:
        first, second = await asyncio.gather(
            OAuthTokens(AuthStorage(path)).fresh("anthropic"),
            OAuthTokens(AuthStorage(path)).fresh("anthropic"),
        )
        return first.access, second.access

    one, two = asyncio.run(both())
    assert one == two != "sk-ant-oat01-old"
    assert fake_auth.refreshes == ["sk-ant-ort01-shared"]


def test_runtime_api_key_wins_over_the_login(
    anthropic_server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    write_oauth(agent_dir, "anthropic", access="sk-ant-oat01-x", refresh="r", expires=1)
    anthropic_server.add(text_reply("ok"))
    with anthropic_server:
        result = _run(
            project_dir, "-p", "hi", "--model", "anthropic/claude-test", "--api-key", "sk-plain"
        )
    assert result.returncode == 0, result.stderr
    (request,) = anthropic_server.requests
    assert request.headers["x-api-key"] == "sk-plain"
    assert "authorization" not in request.headers


def test_subscription_tools_use_claude_code_names(
    anthropic_server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    """As the reference: our ``read`` is sent as Claude Code's ``Read``, and a call to ``Read``
    runs our ``read``; the next request names the earlier call ``Read`` too."""
    (project_dir / "notes.txt").write_text("remember the milk\n")
    write_oauth(
        agent_dir,
        "anthropic",
        access="sk-ant-oat01-stored",
        refresh="r",
        expires=now_ms() + HOUR_MS,
    )
    anthropic_server.add(
        tool_call_reply([tool_call("t1", "Read", {"path": "notes.txt"})]), text_reply("done")
    )
    with anthropic_server:
        result = _run(project_dir, "-p", "read notes", "--model", "anthropic/claude-test")
    assert result.returncode == 0, result.stderr
    first, second = anthropic_server.requests
    assert isinstance(first.body, dict) and isinstance(second.body, dict)
    names = [tool["name"] for tool in first.body["tools"]]
    assert "Read" in names and "read" not in names
    assert "Bash" in names
    uses = [
        block
        for message in second.body["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "tool_use"
    ]
    assert [use["name"] for use in uses] == ["Read"]
    results = [
        block
        for message in second.body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert "remember the milk" in json.dumps(results)  # our read tool ran


def test_the_event_stream_never_carries_the_token(
    anthropic_server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    write_oauth(
        agent_dir,
        "anthropic",
        access="sk-ant-oat01-secret",
        refresh="sk-ant-ort01-secret",
        expires=now_ms() + HOUR_MS,
    )
    anthropic_server.add(text_reply("fine"))
    with anthropic_server:
        result = _run(project_dir, "--mode", "json", "-p", "hi", "--model", "anthropic/claude-test")
    assert result.returncode == 0, result.stderr
    assert "fine" in result.stdout
    everything = result.stdout + result.stderr + _sessions_text(agent_dir)
    assert "sk-ant-oat01-secret" not in everything and "sk-ant-ort01-secret" not in everything


def test_copilot_claude_models_use_the_anthropic_endpoint(
    fake_auth: FakeAuthServer, agent_dir: Path, project_dir: Path
) -> None:
    token = "tid=9;exp=1;proxy-ep=proxy.individual.githubcopilot.com;"
    write_oauth(
        agent_dir, "github-copilot", access=token, refresh="gho_x", expires=now_ms() + HOUR_MS
    )
    result = _run(project_dir, "-p", "hi", "--model", "github-copilot/claude-sonnet-4.5")
    assert result.returncode == 0, result.stderr
    assert "claude via copilot" in result.stdout
    (request,) = fake_auth.chat_requests
    headers = request["headers"]
    assert headers["authorization"] == f"Bearer {token}"
    assert "x-api-key" not in headers
    assert headers["copilot-integration-id"] == "vscode-chat"
    assert request["body"]["model"] == "claude-sonnet-4.5"
