"""Settings ``enabledModels`` scopes RPC ``cycle_model`` as it scopes ``ctrl+p``."""

from __future__ import annotations

import json

from .conftest import MODEL, OTHER_MODEL, PROVIDER, Rpc


def _enable(rpc: Rpc, *patterns: str) -> None:
    (rpc.agent_dir / "settings.json").write_text(json.dumps({"enabledModels": list(patterns)}))


async def test_cycle_model_stays_inside_enabled_models(rpc: Rpc) -> None:
    _enable(rpc, f"{PROVIDER}/{MODEL}", "no-such-*")
    client = await rpc.start()
    assert await client.cycle_model() is None  # the only model of the scope is the current one


async def test_cycle_model_follows_the_patterns_order_and_says_it_is_scoped(rpc: Rpc) -> None:
    _enable(rpc, "*-large", f"{PROVIDER}/*")
    client = await rpc.start()
    cycled = await client.cycle_model()
    assert cycled is not None and cycled["isScoped"] is True
    # Scope order: scripted-large, then scripted-model; from scripted-model the next wraps.
    assert cycled["model"]["id"] == OTHER_MODEL
    again = await client.cycle_model()
    assert again is not None and again["model"]["id"] == MODEL


async def test_patterns_that_match_nothing_cycle_through_all(rpc: Rpc) -> None:
    _enable(rpc, "nothing/*")
    client = await rpc.start()
    cycled = await client.cycle_model()
    assert cycled is not None and cycled["isScoped"] is False
    assert cycled["model"]["id"] == OTHER_MODEL
