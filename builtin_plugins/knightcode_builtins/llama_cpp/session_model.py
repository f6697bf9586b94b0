"""Keep the session's llama.cpp model in step with the router.

When a llama.cpp model becomes the session's model (at start-up, on ``/model`` or RPC
``set_model``) and whenever ``/llama`` loads one, the router is asked again:

* with router autoload on, an unloaded model is loaded now ("load when selected"), with its
  progress in the status line, instead of stalling the first prompt;
* the model's real ``n_ctx`` replaces whatever the registry knew, and the session's model is
  swapped for the updated one (``ctx.agent.set_model``), so compaction thresholds use the
  context window the server actually runs with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knightcode_builtins.llama_cpp.connection import PROVIDER, connection_for
from knightcode_builtins.llama_cpp.errors import ModelNotFound, RouterError
from knightcode_builtins.llama_cpp.loading import load_model
from knightcode_builtins.llama_cpp.router import RouterClient

if TYPE_CHECKING:
    from knightcode import HookContext
    from knightcode_builtins.llama_cpp.loading import Progress

__all__ = ["STATUS_KEY", "progress_reporter", "refresh_registry", "sync_session_model"]

STATUS_KEY = "llama.cpp"


def progress_reporter(ctx: HookContext, model_id: str, verb: str = "Loading") -> Progress:
    """An ``on_progress`` callback that shows ``Loading <id>… 40%`` in the status line."""

    def report(status: str, fraction: float | None) -> None:
        percent = f" {fraction:.0%}" if fraction is not None else ""
        ctx.ui.set_status(STATUS_KEY, f"{verb} {model_id}…{percent}")

    return report


async def refresh_registry(ctx: HookContext) -> None:
    """Re-read the router's models into the session's registry (no-op without one)."""
    registry = ctx.model_registry
    if registry is not None and PROVIDER in registry.providers:
        await registry.refresh_models([PROVIDER], signal=ctx.signal)


async def sync_session_model(ctx: HookContext, load: bool = True) -> None:
    """Load the session's llama.cpp model if the router would autoload it anyway, then give
    the session the model with the router's context window. Failures are notified, not raised:
    the prompt that follows reports them again, in its own words.
    """
    agent, registry = ctx.agent, ctx.model_registry
    if agent is None or registry is None or agent.model.provider != PROVIDER:
        return
    model_id = agent.model.id
    try:
        async with RouterClient(await connection_for(ctx)) as client:
            state = await client.state()
            entry = state.find(model_id)
            if entry is None:
                raise ModelNotFound(client.url, model_id, [m.id for m in state.models])
            if load and state.autoload and entry.status in ("unloaded", "loading"):
                try:
                    await load_model(client, model_id, progress_reporter(ctx, model_id))
                finally:
                    ctx.ui.set_status(STATUS_KEY, None)
            elif not state.autoload and entry.status == "unloaded" and ctx.has_ui:
                # knightcode started (or switched) on a model that is not ready: say how to load
                # it now rather than at the first prompt
                ctx.ui.notify(f"{model_id} is not loaded: type /llama load {model_id}", "warning")
    except RouterError as exc:
        ctx.ui.notify(str(exc), "error")
        return
    await registry.refresh_models([PROVIDER], signal=ctx.signal)
    fresh = registry.find_known(PROVIDER, model_id)
    # set_model fires model_select again; the second pass finds nothing to change and stops.
    if fresh is not None and fresh != agent.model:
        await agent.set_model(fresh)
