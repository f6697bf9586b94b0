"""The thinking level follows a model switch (RPC ``set_model``/``cycle_model``; ``/model`` and
``ctrl+p`` go through the same ``AgentSession.set_model``): settings ``modelThinkingLevels`` and
``defaultThinkingLevel``, clamped to the new model, as in the reference.
"""

from __future__ import annotations

import json
from typing import Any

from knightcode.testing import text_reply

from .conftest import MODEL, OTHER_MODEL, PROVIDER, Rpc

XHIGH_MODEL = "scripted-xhigh"


def _setup(rpc: Rpc, **settings: Any) -> None:
    models = [
        {"id": MODEL, "contextWindow": 32000, "maxTokens": 4096},
        {"id": OTHER_MODEL, "contextWindow": 128000, "maxTokens": 8192, "reasoning": True},
        {
            "id": XHIGH_MODEL,
            "contextWindow": 128000,
            "maxTokens": 8192,
            "reasoning": True,
            "thinkingLevelMap": {"xhigh": "xhigh"},
        },
    ]
    provider = {"baseUrl": rpc.server.base_url, "api": "openai-completions", "models": models}
    (rpc.agent_dir / "models.json").write_text(json.dumps({"providers": {PROVIDER: provider}}))
    (rpc.agent_dir / "settings.json").write_text(json.dumps(settings))


async def _level(client: Any) -> str:
    return str((await client.get_state())["thinkingLevel"])


async def test_model_thinking_levels_apply_when_switching(rpc: Rpc) -> None:
    _setup(rpc, modelThinkingLevels={f"{PROVIDER}/{OTHER_MODEL}": "low"})
    client = await rpc.start()
    assert await _level(client) == "off"
    await client.set_model(PROVIDER, OTHER_MODEL)
    assert await _level(client) == "low"
    # The level reaches the request.
    rpc.server.add(text_reply("ok"))
    await client.prompt_and_wait("hi")
    assert rpc.server.requests[-1].body["reasoning_effort"] == "low"
    # Back to a model that does not reason: off, and recorded in the session file.
    await client.set_model(PROVIDER, MODEL)
    assert await _level(client) == "off"
    lines = rpc.session_lines((await client.get_state())["sessionFile"])
    levels = [e["thinkingLevel"] for e in lines if e["type"] == "thinking_level_change"]
    assert levels[-2:] == ["low", "off"]


async def test_default_thinking_level_applies_on_cycle(rpc: Rpc) -> None:
    _setup(
        rpc,
        defaultThinkingLevel="minimal",
        enabledModels=[f"{PROVIDER}/{MODEL}", f"{PROVIDER}/{OTHER_MODEL}"],
    )
    client = await rpc.start()
    cycled = await client.cycle_model()
    assert cycled is not None and cycled["model"]["id"] == OTHER_MODEL
    assert cycled["thinkingLevel"] == "minimal"


async def test_xhigh_is_kept_only_where_the_model_has_it(rpc: Rpc) -> None:
    _setup(rpc)
    client = await rpc.start(model=XHIGH_MODEL)
    await client.set_thinking_level("xhigh")
    assert await _level(client) == "xhigh"
    await client.set_model(PROVIDER, OTHER_MODEL)  # no xhigh in its map: clamped to high
    assert await _level(client) == "high"
    await client.set_thinking_level("xhigh")  # setting it directly is clamped too
    assert await _level(client) == "high"
    await client.set_model(PROVIDER, MODEL)
    await client.set_thinking_level("high")  # a model that does not reason stays off
    assert await _level(client) == "off"
