"""The catalogue's compatibility switches reach the request, through the real executable.

A built-in provider pointed at the scripted server (models.json ``baseUrl`` only) keeps the
catalogue's ``compat``: the server is on 127.0.0.1, whose URL-based defaults would be different,
so what the body shows comes from the catalogue.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from knightcode.testing import text_reply

from .conftest import Scripted


def ask_builtin(scripted: Scripted, provider: str, model: str, variable: str) -> dict[str, Any]:
    """``-p hi --thinking high`` with ``provider/model``; the body the server received."""
    data = {"providers": {provider: {"baseUrl": scripted.server.base_url}}}
    (scripted.agent_dir / "models.json").write_text(json.dumps(data))
    scripted.server.add(text_reply("ok"))
    command = ["-m", "knightcode", "--model", f"{provider}/{model}", "--thinking", "high"]
    result = subprocess.run(
        [sys.executable, *command, "-p", "hi"],
        cwd=scripted.project,
        env=scripted.env(**{variable: "sk-catalogue"}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    request = scripted.server.requests[-1]
    assert request.headers["authorization"] == "Bearer sk-catalogue"
    assert isinstance(request.body, dict)
    return request.body


def test_groq_is_a_standard_openai_endpoint(scripted: Scripted) -> None:
    body = ask_builtin(scripted, "groq", "openai/gpt-oss-120b", "GROQ_API_KEY")
    assert body["model"] == "openai/gpt-oss-120b"
    assert body["store"] is False  # supportsStore
    assert body["messages"][0]["role"] == "developer"  # supportsDeveloperRole, reasoning model
    assert body["reasoning_effort"] == "high"  # supportsReasoningEffort


def test_moonshot_is_not(scripted: Scripted) -> None:
    body = ask_builtin(scripted, "moonshotai", "kimi-k2.6", "MOONSHOT_API_KEY")
    assert body["model"] == "kimi-k2.6"
    assert "store" not in body
    assert body["messages"][0]["role"] == "system"
    assert "reasoning_effort" not in body
