"""Settings keys that change what is sent to the model, checked on the request body the scripted
server received from the real executable (issue 17: validated settings must also be honoured).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from knightcode.testing import error_reply, reply, text_reply

from .conftest import MODEL, PROVIDER, Scripted, write_models_json


def _write_settings(scripted: Scripted, **settings: Any) -> None:
    data = {"retry": {"baseDelayMs": 10}, **settings}
    (scripted.agent_dir / "settings.json").write_text(json.dumps(data), encoding="utf-8")


def _anthropic_models_json(agent_dir: Path, base_url: str) -> None:
    """The scripted provider as an Anthropic messages endpoint with a budget-thinking model."""
    model = {"id": MODEL, "contextWindow": 200000, "maxTokens": 64000, "reasoning": True}
    provider = {"baseUrl": base_url, "api": "anthropic-messages", "apiKey": "k", "models": [model]}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {PROVIDER: provider}}))


def test_thinking_budgets_set_the_anthropic_budget(scripted: Scripted) -> None:
    _anthropic_models_json(scripted.agent_dir, scripted.server.base_url)
    _write_settings(scripted, thinkingBudgets={"low": 1234, "high": 20000})
    scripted.server.add(text_reply("ok"), text_reply("ok"))
    low = scripted.run("--no-session", "--thinking", "low", "-p", "hi")
    assert low.returncode == 0, low.stderr
    medium = scripted.run("--no-session", "--thinking", "medium", "-p", "hi")
    assert medium.returncode == 0, medium.stderr
    first, second = (request.body for request in scripted.server.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 1234}
    # A level without a configured budget keeps the provider default.
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 8192}


def _effort_sent(scripted: Scripted, *args: str) -> object:
    """The ``reasoning_effort`` of a one-prompt print run (None when the request had none)."""
    scripted.server.add(text_reply("ok"))
    result = scripted.run("--no-session", *args, "-p", "hi")
    assert result.returncode == 0, result.stderr
    return scripted.server.requests[-1].body.get("reasoning_effort")


def test_default_thinking_level_is_the_references_medium(scripted: Scripted) -> None:
    write_models_json(scripted.agent_dir, scripted.server.base_url, reasoning=True)
    assert _effort_sent(scripted) == "medium"
    _write_settings(scripted, defaultThinkingLevel="low")
    assert _effort_sent(scripted) == "low"
    _write_settings(scripted, defaultThinkingLevel="off")
    assert _effort_sent(scripted) is None


def test_a_model_that_does_not_reason_starts_at_off(scripted: Scripted) -> None:
    _write_settings(scripted, defaultThinkingLevel="high")
    scripted.server.add(text_reply("ok"))
    _records, result = scripted.run_json("hi")
    assert result.returncode == 0, result.stderr
    assert "reasoning_effort" not in scripted.server.requests[0].body
    (change,) = [e for e in scripted.session_entries() if e["type"] == "thinking_level_change"]
    assert change["thinkingLevel"] == "off"


def test_model_thinking_levels_beat_the_default_and_lose_to_the_flag(scripted: Scripted) -> None:
    write_models_json(scripted.agent_dir, scripted.server.base_url, reasoning=True)
    levels = {f"{PROVIDER}/{MODEL}": "high", f"{PROVIDER}/other": "minimal"}
    _write_settings(scripted, defaultThinkingLevel="low", modelThinkingLevels=levels)
    assert _effort_sent(scripted) == "high"
    assert _effort_sent(scripted, "--thinking", "minimal") == "minimal"


def test_a_resumed_session_keeps_its_recorded_level(scripted: Scripted) -> None:
    write_models_json(scripted.agent_dir, scripted.server.base_url, reasoning=True)
    levels = {f"{PROVIDER}/{MODEL}": "high"}
    _write_settings(scripted, modelThinkingLevels=levels)
    scripted.server.add(text_reply("ok"), text_reply("ok"))
    first = scripted.run("--thinking", "low", "-p", "hi")
    assert first.returncode == 0, first.stderr
    again = scripted.run("--continue", "-p", "again")
    assert again.returncode == 0, again.stderr
    assert [r.body.get("reasoning_effort") for r in scripted.server.requests] == ["low", "low"]


_PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (1).to_bytes(4, "big") * 2 + b"\x08\x02\0\0\0"


def test_block_images_sends_the_placeholder_instead(scripted: Scripted) -> None:
    for name in ("a.png", "b.png"):
        (scripted.project / name).write_bytes(_PNG)
    write_models_json(scripted.agent_dir, scripted.server.base_url, input=["text", "image"])
    _write_settings(scripted, images={"blockImages": True})
    scripted.server.add(text_reply("no pixels"))
    result = scripted.run("-p", "@a.png", "@b.png", "what is this?")
    assert result.returncode == 0, result.stderr
    content = scripted.server.requests[0].body["messages"][-1]["content"]
    texts = [part.get("text") for part in content]
    # Two images in a row: one placeholder, and no image part at all.
    assert [part["type"] for part in content] == ["text"] * len(content)
    assert texts.count("Image reading is disabled.") == 1
    # Only the request is changed: the session keeps the images.
    (user,) = [e["message"] for e in scripted.session_entries() if e.get("type") == "message"][:1]
    assert [block["type"] for block in user["content"]].count("image") == 2


def test_provider_max_retries_repeat_the_request_inside_one_call(scripted: Scripted) -> None:
    # The agent's own retry is off: only retry.provider.maxRetries can repeat the request.
    retry = {"enabled": False, "provider": {"maxRetries": 2}}
    _write_settings(scripted, retry=retry)
    scripted.server.add(error_reply(503, "busy"), error_reply(429, "slow down"), text_reply("ok"))
    records, result = scripted.run_json("hi")
    assert result.returncode == 0, result.stderr
    assert len(scripted.server.requests) == 3
    assert not [r for r in records if r["type"] == "auto_retry_start"]  # inside the provider
    end = [r for r in records if r["type"] == "message_end"][-1]
    assert end["message"]["stopReason"] == "stop"


def test_provider_max_retries_default_and_permanent_errors_do_not_repeat(
    scripted: Scripted,
) -> None:
    _write_settings(scripted, retry={"enabled": False})
    scripted.server.add(error_reply(503, "busy"))
    assert scripted.run("--no-session", "-p", "hi").returncode != 0
    _write_settings(scripted, retry={"enabled": False, "provider": {"maxRetries": 3}})
    scripted.server.add(error_reply(400, "bad request"))
    assert scripted.run("--no-session", "-p", "hi").returncode != 0
    assert len(scripted.server.requests) == 2  # one each: 0 retries, and 400 is not transient


def test_provider_timeout_ms_bounds_the_request(scripted: Scripted) -> None:
    retry = {"enabled": False, "provider": {"timeoutMs": 300}}
    _write_settings(scripted, httpIdleTimeoutMs=60000, retry=retry)
    scripted.server.add(reply(text=["late"], delay=3.0))
    started = time.monotonic()
    result = scripted.run("--no-session", "-p", "hi")
    assert result.returncode != 0
    assert "timed out" in result.stderr.lower() or "timeout" in result.stderr.lower()
    assert time.monotonic() - started < 2.5
