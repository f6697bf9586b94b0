"""RPC mode on a router with autoload off and nothing loaded: knightcode starts, ``/llama load``
(sent as a ``prompt``, no dialog) loads the model, the session moves to it with the router's
context window, and the next prompt is answered — through the real executable and router."""

from __future__ import annotations

import os
from pathlib import Path

from knightcode.rpc import Client

from .conftest import KEY, statuses
from .servers import LlamaServer


async def test_rpc_starts_with_nothing_loaded_and_loads_through_llama(
    router: LlamaServer, project_dir: Path
) -> None:
    router.ensure(set())
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith("LLAMA_")
    }
    env.update(
        LLAMA_BASE_URL=router.url, LLAMA_API_KEY=KEY, KNIGHTCODE_LOAD_PLUGINS="builtin:llama.cpp"
    )
    args = ["--model", "llama.cpp/tiny-chat", "--no-session", "--system-prompt", "You are terse."]
    async with Client([*args, "--no-builtin-tools"], env=env, cwd=project_dir, timeout=60) as rpc:
        state = await rpc.get_state()
        assert state["model"]["id"] == "tiny-chat"  # started on the model that is not loaded
        mark = rpc.mark()
        await rpc.prompt("/llama load tiny-chat")
        notice = await rpc.wait_for(
            lambda r: r.get("method") == "notify" and "Loaded" in str(r.get("message")),
            since=mark,
            timeout=60,
        )
        assert notice["message"] == "Loaded tiny-chat · context window 2048 tokens"
        assert statuses(router)["tiny-chat"] == "loaded"
        assert (await rpc.get_state())["model"]["contextWindow"] == 2048  # the router's n_ctx
        await rpc.prompt_and_wait("Say hello", timeout=60)
        assert await rpc.get_last_assistant_text() == "Hello!"
