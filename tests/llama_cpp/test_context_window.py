"""The context window comes from the server: the router's ``n_ctx`` becomes the model's
``context_window`` (re-read on every load and model switch), and with the settings' reserve it
gives the compaction threshold (``contextWindow - reserveTokens``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .conftest import KEY, Harness
from .scripted_ui import WAIT, ScriptedUI, select
from .servers import LlamaServer


def n_ctx(server: LlamaServer, model_id: str) -> int:
    """What the router itself says (``GET /models`` → ``meta.n_ctx``)."""
    (entry,) = [m for m in server.call("GET", "/models")["data"] if m["id"] == model_id]
    return int(entry["meta"]["n_ctx"])


def reserve(agent_dir: Path, reserve_tokens: int, model: str) -> None:
    """Settings with a per-model compaction reserve (read when the harness's host starts)."""
    (agent_dir / "settings.json").write_text(
        json.dumps({"compaction": {"modelOverrides": {model: {"reserveTokens": reserve_tokens}}}})
    )


async def test_window_is_the_routers_n_ctx_and_sets_the_threshold(
    router: LlamaServer, make_harness: Callable[..., Harness], agent_dir: Path
) -> None:
    router.ensure({"tiny-small-ctx"})
    reserve(agent_dir, 56, "llama.cpp/tiny-small-ctx")
    harness = make_harness(router.url, KEY)
    model = await harness.registry.resolve("llama.cpp/tiny-small-ctx")
    assert model.context_window == n_ctx(router, "tiny-small-ctx") == 256  # the preset said 64
    assert harness.ctx.settings is not None
    budgets = harness.ctx.settings.compaction_for(model.provider, model.id)
    assert model.context_window - budgets.reserve_tokens == 200  # compaction starts above this


async def test_autoload_loads_the_session_model_and_updates_its_window(
    autoload_router: LlamaServer, make_harness: Callable[..., Harness], agent_dir: Path
) -> None:
    autoload_router.ensure(set())
    reserve(agent_dir, 48, "llama.cpp/tiny-tools")
    harness = make_harness(autoload_router.url)
    agent = await harness.agent("llama.cpp/tiny-tools")
    assert agent.model.context_window == 4096  # never loaded: no n_ctx yet
    assert harness.ctx.settings is not None
    await harness.host.hooks.session_start(reason="startup", previous_session_file=None)
    assert autoload_router.statuses()["tiny-tools"]["value"] in ("loaded", "sleeping")
    assert agent.model.context_window == n_ctx(autoload_router, "tiny-tools") == 2048
    assert any(text and text.startswith("Loading tiny-tools…") for text in harness.ui.statuses)
    budgets = harness.ctx.settings.compaction_for(agent.model.provider, agent.model.id)
    assert agent.model.context_window - budgets.reserve_tokens == 2000


async def test_model_switch_rereads_the_window(
    autoload_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    autoload_router.ensure({"tiny-chat"})
    harness = make_harness(autoload_router.url)
    agent = await harness.agent("llama.cpp/tiny-chat")
    unloaded = await harness.registry.resolve("llama.cpp/tiny-tools")
    assert unloaded.context_window == 4096
    await agent.set_model(unloaded)  # what /model and RPC set_model do
    assert agent.model.id == "tiny-tools"
    assert agent.model.context_window == 2048
    assert harness.registry.find_known("llama.cpp", "tiny-tools") == agent.model


async def test_llama_load_updates_the_session_model(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    ui = ScriptedUI(select("tiny-small-ctx"), select("Keep them loaded"), select(WAIT))
    harness = make_harness(router.url, KEY, ui)
    await harness.agent("llama.cpp/tiny-chat")
    await harness.llama()
    assert "Loaded tiny-small-ctx · context window 256 tokens" in ui.notes("info")
    small = harness.registry.find_known("llama.cpp", "tiny-small-ctx")
    assert small is not None and small.context_window == 256


def compaction_run(
    project: Path, agent_dir: Path, router: LlamaServer, reserve_tokens: int
) -> list[dict[str, Any]]:
    """``knightcode --mode json`` with builtin:compaction and a reserve, on a fresh session."""
    (agent_dir / "settings.json").write_text(
        json.dumps({"compaction": {"reserveTokens": reserve_tokens}})
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_")}
    env.update(
        LLAMA_BASE_URL=router.url, KNIGHTCODE_LOAD_PLUGINS="builtin:llama.cpp,builtin:compaction"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "knightcode",
            "--mode",
            "json",
            "--system-prompt",
            "You are terse.",
            "--no-builtin-tools",
            "--model",
            "llama.cpp/tiny-chat",
            "Say hello",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.split("\n") if line]


def test_compaction_threshold_end_to_end(
    autoload_router: LlamaServer, project_dir: Path, agent_dir: Path
) -> None:
    """The real executable with builtin:compaction: tiny-chat starts unloaded (its window then
    unknown, 4096 as a placeholder); selecting it loads it and its n_ctx, 2048, becomes the
    window. Compaction runs after the reply exactly when the context passes 2048 - reserve — a
    4096 window would never trigger it with these reserves."""
    autoload_router.ensure(set())
    records = compaction_run(project_dir, agent_dir, autoload_router, 2047)  # threshold 1
    (reply,) = [
        r["message"]
        for r in records
        if r["type"] == "message_end" and r["message"]["role"] == "assistant"
    ]
    tokens = reply["usage"]["input"] + reply["usage"]["output"]
    assert 1 < tokens < 2049  # over 2048 - 2047, far under 4096 - 2047
    end = next(r for r in records if r["type"] == "compaction_end")
    assert (
        end["reason"] == "threshold" and end["result"]["summary"] == "Hello!"
    )  # tiny-chat summarised

    autoload_router.ensure(set())
    records = compaction_run(
        project_dir, agent_dir, autoload_router, 2048 - tokens
    )  # threshold = tokens
    assert [
        r for r in records if r["type"].startswith("compaction")
    ] == []  # not over: no compaction
