"""``knightcode doctor``: real broken files, a real loopback provider (reachable, refusing the key,
unreachable), all problems at once, exit 2; keys never printed. And ``config list``'s warning.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knightcode.testing import ScriptedServer
from tests.loopback import answering

SECRET = "sk-doctor-secret-0123456789"


def doctor(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "knightcode", "doctor", *args],
        capture_output=True,
        text=True,
        check=False,
        env=environ,
        timeout=60,
    )


def checks(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    data = json.loads(result.stdout)
    return {row["check"]: row for row in data["checks"]}


def _provider(base_url: str, key: str | None = SECRET) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "baseUrl": base_url,
        "api": "openai-completions",
        "models": [{"id": "m"}],
    }
    if key is not None:
        entry["apiKey"] = key
    return entry


@pytest.fixture
def refusing() -> Iterator[str]:
    with answering(401) as url:
        yield f"{url}/v1"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_clean_setup_passes(agent_dir: Path) -> None:
    result = doctor("--json", "--offline")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["problems"] == 0


def test_every_broken_file_is_listed_at_once(agent_dir: Path, project_dir: Path) -> None:
    (agent_dir / "settings.json").write_text('{"retry": {"maxRetries": "three"}}')
    (project_dir / ".knightcode").mkdir()
    (project_dir / ".knightcode" / "settings.json").write_text('{"theme": ')
    (agent_dir / "models.json").write_text('{"providers": {"x": {"models": [{"id": 3}]}}}')
    auth = agent_dir / "auth.json"
    auth.write_text(json.dumps({"openai": {"type": "api_key", "key": SECRET}}))
    auth.chmod(0o644)
    (agent_dir / "keybindings.json").write_text('{"no.such.action": "ctrl+x"}')
    (agent_dir / "tools.json").write_text('{"search": {"count": 99}}')
    (agent_dir / "mcp.json").write_text('{"mcpServers": []}')
    (agent_dir / "themes").mkdir()
    (agent_dir / "themes" / "broken.json").write_text('{"name": "broken", "colors": {"accent": 5}}')
    result = doctor("--json", "--offline")
    assert result.returncode == 2
    rows = checks(result)
    problems = {name for name, row in rows.items() if row["status"] == "problem"}
    assert {
        "settings.json (user)",
        "settings.json (project)",
        "models.json",
        "auth.json",
        "keybindings.json",
        "tools.json",
        "mcp.json (user)",
        "theme broken",
    } <= problems
    assert "retry.maxRetries" in rows["settings.json (user)"]["detail"]
    assert "0644" in rows["auth.json"]["detail"] and "0600" in rows["auth.json"]["detail"]
    assert "no.such.action" in rows["keybindings.json"]["detail"]
    assert json.loads(result.stdout)["problems"] == len(problems)
    assert SECRET not in result.stdout + result.stderr
    # The text form says the same, one line each, and the count.
    text = doctor("--offline")
    assert text.returncode == 2
    assert f"{len(problems)} problems found" in text.stdout
    assert text.stdout.count("PROBLEM") == len(problems)


def test_providers_reachable_refusing_and_unreachable(agent_dir: Path, refusing: str) -> None:
    with ScriptedServer(models=("m",)) as good:
        providers = {
            "good": _provider(good.base_url),
            "refusing": _provider(refusing),
            "down": _provider(f"http://127.0.0.1:{_closed_port()}/v1"),
            "keyless": _provider(good.base_url, key="DOCTOR_TEST_KEY"),
        }
        (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
        result = doctor("--json", DOCTOR_TEST_KEY=SECRET)
    rows = checks(result)
    assert result.returncode == 2
    good_row = rows["provider good"]
    assert good_row["status"] == "ok" and "reachable (HTTP 200)" in good_row["detail"]
    assert "models.json apiKey (literal)" in good_row["detail"]
    assert rows["provider refusing"]["status"] == "problem"
    assert "refused (HTTP 401)" in rows["provider refusing"]["detail"]
    assert rows["provider down"]["status"] == "problem"
    assert "cannot reach" in rows["provider down"]["detail"]
    # A key from the environment is named by its variable.
    assert "$DOCTOR_TEST_KEY" in rows["provider keyless"]["detail"]
    assert SECRET not in result.stdout + result.stderr


def test_offline_skips_the_network_and_a_missing_key_is_a_problem(agent_dir: Path) -> None:
    providers = {
        "nokey": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "UNSET_DOCTOR_VARIABLE",
            "models": [{"id": "m"}],
        }
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    result = doctor("--json", "--offline")
    row = checks(result)["provider nokey"]
    assert row["status"] == "skipped" and "--offline" in row["detail"]
    (agent_dir / "auth.json").write_text(json.dumps({"openai": {"type": "api_key", "key": "k"}}))
    (agent_dir / "auth.json").chmod(0o600)
    rows = checks(doctor("--json", "--offline"))
    assert rows["auth.json"]["status"] == "ok"
    assert "key from auth.json" in rows["provider openai"]["detail"]


def test_config_list_warns_about_invalid_settings(agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text('{"theme": 3}')
    result = subprocess.run(
        [sys.executable, "-m", "knightcode", "config", "list"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "KNIGHTCODE_LOAD_PLUGINS": ""},
        timeout=60,
    )
    assert "warning: settings error in" in result.stderr and "theme" in result.stderr
    assert "knightcode doctor" in result.stderr
