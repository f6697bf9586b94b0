"""Settings keys that change what is sent to the model, checked on the request body the scripted
server received from the real executable (issue 17: validated settings must also be honoured).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knightcode.testing import text_reply

from .conftest import MODEL, PROVIDER, Scripted


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
