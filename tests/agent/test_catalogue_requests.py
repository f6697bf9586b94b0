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


def prompt_builtin(scripted: Scripted, provider: str, variable: str, *args: str) -> None:
    """``knightcode ARGS -p hi`` with ``provider`` pointed at the server and its key set."""
    data = {"providers": {provider: {"baseUrl": scripted.server.base_url}}}
    (scripted.agent_dir / "models.json").write_text(json.dumps(data))
    scripted.server.add(text_reply("ok"))
    result = subprocess.run(
        [sys.executable, "-m", "knightcode", *args, "-p", "hi"],
        cwd=scripted.project,
        env=scripted.env(**{variable: "sk-catalogue"}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def ask_builtin(scripted: Scripted, provider: str, model: str, variable: str) -> dict[str, Any]:
    """``-p hi --thinking high`` with ``provider/model``; the body the server received."""
    prompt_builtin(
        scripted, provider, variable, "--model", f"{provider}/{model}", "--thinking", "high"
    )
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


def test_without_a_model_the_catalogue_default_of_a_keyed_provider_is_used(
    scripted: Scripted,
) -> None:
    """No ``--model``, no settings: groq has a key, so its default model (the reference's)."""
    prompt_builtin(scripted, "groq", "GROQ_API_KEY")
    body = scripted.server.requests[-1].body
    assert isinstance(body, dict) and body["model"] == "openai/gpt-oss-120b"
