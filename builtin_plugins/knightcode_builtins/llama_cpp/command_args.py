"""``/llama list``, ``/llama load ID``, ``/llama unload ID``: the router without dialogs.

The dialog-driven ``/llama`` needs someone to answer; these forms do not, so they work in every
mode — ``knightcode --model llama.cpp/ID -p "/llama load ID" "prompt"`` loads a model on a router
with autoload off and then asks it, in one run. A failure raises (the mode reports the command
as failed, e.g. an ``extension_error`` record in JSON mode); a success is a notice.

After a load, the session follows: when its model is the one just loaded, or a llama.cpp model
that is not ready (knightcode started on a router with nothing loaded), it moves to the freshly
loaded model with the router's context window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knightcode_builtins.llama_cpp.connection import PROVIDER, connection_for
from knightcode_builtins.llama_cpp.errors import ModelNotFound, RouterError
from knightcode_builtins.llama_cpp.loading import load_model
from knightcode_builtins.llama_cpp.router import RouterClient, RouterState
from knightcode_builtins.llama_cpp.session_model import progress_reporter, refresh_registry

if TYPE_CHECKING:
    from knightcode import HookContext

__all__ = ["USAGE", "run_subcommand"]

USAGE = "usage: /llama [list | load MODEL | unload MODEL]"


async def run_subcommand(args: str, ctx: HookContext) -> None:
    """Run ``/llama <args>`` (``list``, ``load ID``, ``unload ID``).

    :raises RouterError: the router failed, or the arguments are not understood
    """
    verb, _, rest = args.strip().partition(" ")
    model_id = rest.strip()
    async with RouterClient(await connection_for(ctx)) as client:
        state = await client.state()
        if verb in ("list", "status") and not model_id:
            ctx.ui.notify(listing(client, state), "info")
            return
        if verb not in ("load", "unload") or not model_id or " " in model_id:
            raise RouterError(f"/llama {args.strip()}: {USAGE}")
        entry = state.find(model_id)
        if entry is None:
            raise ModelNotFound(client.url, model_id, [m.id for m in state.models])
        if verb == "unload":
            await client.unload(model_id)
            ctx.ui.notify(f"Unloaded {model_id}", "info")
            await refresh_registry(ctx)
            return
        loaded = entry if entry.selectable else None
        if loaded is None:
            loaded = await load_model(client, model_id, progress_reporter(ctx, model_id))
            ctx.ui.set_status("llama.cpp", None)
    window = f" · context window {loaded.n_ctx} tokens" if loaded.n_ctx else ""
    ctx.ui.notify(f"Loaded {model_id}{window}", "info")
    await follow_load(ctx, model_id)


def listing(client: RouterClient, state: RouterState) -> str:
    """The router's models, one a line, for a notice."""
    autoload = "autoload on" if state.autoload else "autoload off"
    lines = [f"llama.cpp router at {client.url} · {autoload}"]
    lines += [f"  {model.id} — {model.describe()}" for model in state.models]
    return "\n".join(lines)


async def follow_load(ctx: HookContext, model_id: str) -> None:
    """Re-read the router and move the session to ``model_id`` when its model is that one or a
    llama.cpp model that is not ready yet.
    """
    await refresh_registry(ctx)
    agent, registry = ctx.agent, ctx.model_registry
    if agent is None or registry is None or agent.model.provider != PROVIDER:
        return
    current = agent.model.id
    waiting = registry.unavailable_reason(PROVIDER, current) is not None
    if current != model_id and not waiting:
        return
    fresh = registry.find_known(PROVIDER, model_id)
    if fresh is not None and fresh != agent.model:
        await agent.set_model(fresh)
