"""``--models PATTERNS``: the model scope of one run — the start-up model when ``--model`` is
not given, and what RPC ``cycle_model`` goes through (with each pattern's ``:LEVEL``), over
settings ``enabledModels``.
"""

from __future__ import annotations

import json
import subprocess
import sys

from knightcode.testing import text_reply
from tests.agent.conftest import MODEL, PROVIDER, Scripted
from tests.rpc.conftest import OTHER_MODEL, Rpc, rpc  # noqa: F401 (the fixture)


def _two_models(scripted: Scripted) -> None:
    path = scripted.agent_dir / "models.json"
    config = json.loads(path.read_text())
    config["providers"][PROVIDER]["models"].append(
        {"id": "scripted-large", "reasoning": True, "contextWindow": 64000, "maxTokens": 4096}
    )
    path.write_text(json.dumps(config))


def _run(scripted: Scripted, *args: str) -> subprocess.CompletedProcess[str]:
    """``knightcode ARGS`` without the fixture's ``--model``."""
    return subprocess.run(
        [sys.executable, "-m", "knightcode", *args],
        cwd=scripted.project,
        env=scripted.env(KNIGHTCODE_LOAD_PLUGINS=""),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_first_model_of_the_scope_starts_with_its_level(scripted: Scripted) -> None:
    _two_models(scripted)
    scripted.server.add(text_reply("large"))
    result = _run(scripted, "--models", "large:high,scripted-model", "-p", "hi")
    assert result.returncode == 0, result.stderr
    (request,) = scripted.server.requests
    assert request.body["model"] == "scripted-large"
    assert request.body.get("reasoning_effort") == "high"


def test_models_wins_over_enabled_models_and_model_over_both(scripted: Scripted) -> None:
    _two_models(scripted)
    (scripted.agent_dir / "settings.json").write_text(
        json.dumps({"enabledModels": ["scripted-large"]})
    )
    scripted.server.add(text_reply("a"), text_reply("b"), text_reply("c"))
    assert _run(scripted, "-p", "one").returncode == 0  # enabledModels alone: its first
    assert _run(scripted, "--models", f"{PROVIDER}/{MODEL}", "-p", "two").returncode == 0
    both = _run(scripted, "--models", "large", "--model", f"{PROVIDER}/{MODEL}", "-p", "three")
    assert both.returncode == 0, both.stderr
    assert [r.body["model"] for r in scripted.server.requests] == [
        "scripted-large",
        MODEL,
        MODEL,
    ]


def test_a_pattern_that_matches_nothing_is_a_warning(scripted: Scripted) -> None:
    scripted.server.add(text_reply("ok"))
    result = _run(scripted, "--models", "nothing-like-it,scripted-model", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "--models: no usable model matches 'nothing-like-it'" in result.stderr
    assert scripted.server.requests[0].body["model"] == MODEL


def test_an_empty_models_value_is_a_usage_error(scripted: Scripted) -> None:
    result = scripted.run("--models", " , ", "-p", "hi")
    assert result.returncode == 2
    assert "--models" in result.stderr and "Traceback" not in result.stderr


async def test_rpc_cycle_model_follows_models_with_levels(rpc: Rpc) -> None:  # noqa: F811
    (rpc.agent_dir / "settings.json").write_text(json.dumps({"enabledModels": ["nothing/*"]}))
    client = await rpc.start("--models", f"{OTHER_MODEL}:high,{PROVIDER}/*")
    cycled = await client.cycle_model()
    assert cycled is not None and cycled["isScoped"] is True
    assert (cycled["model"]["id"], cycled["thinkingLevel"]) == (OTHER_MODEL, "high")
    again = await client.cycle_model()
    assert again is not None and again["model"]["id"] == "scripted-model"
