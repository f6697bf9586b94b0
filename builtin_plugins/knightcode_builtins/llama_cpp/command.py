"""``/llama``: the router's current state, and loading, unloading and downloading models.

Everything goes through the extension UI (``ctx.ui.select``/``confirm``/``input``/``notify``),
so the command works wherever a UI answers dialogs: RPC mode now, the terminal UI later.

* The list is read from the router every time: the router may be shared with other clients.
* Selecting an unloaded model loads it, with progress and a cancel that asks first. When other
  models are loaded, the user chooses to unload them first or keep them; nothing is unloaded
  silently, and no file is ever deleted.
* Selecting a loaded (or sleeping) model unloads it; a loading one offers to cancel the load.
* If the router disconnects, **Retry** reconnects and shows the fresh state — the interrupted
  operation is not replayed — and **Close** ends the command.
* ``/llama list``, ``/llama load ID`` and ``/llama unload ID`` act without a dialog, in every
  mode (``command_args``); so does a bare ``/llama`` where nobody can answer (it lists).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knightcode_builtins.llama_cpp.command_args import follow_load
from knightcode_builtins.llama_cpp.connection import connection_for
from knightcode_builtins.llama_cpp.errors import RouterError, RouterUnreachable
from knightcode_builtins.llama_cpp.loading import wait_until_loaded
from knightcode_builtins.llama_cpp.progress import run_cancellable
from knightcode_builtins.llama_cpp.router import RouterClient, RouterState
from knightcode_builtins.llama_cpp.router_models import RouterModel
from knightcode_builtins.llama_cpp.session_model import (
    progress_reporter,
    refresh_registry,
)

if TYPE_CHECKING:
    from knightcode import HookContext

__all__ = ["DOWNLOAD", "KEEP_OTHERS", "RETRY", "UNLOAD_OTHERS", "llama_command"]

DOWNLOAD = "Download model…"
CLOSE = "Close"
RETRY = "Retry"
UNLOAD_OTHERS = "Unload them first"
KEEP_OTHERS = "Keep them loaded"


async def llama_command(args: str, ctx: HookContext) -> None:
    """Show the router's models and act on the one the user picks (see the module docstring);
    with arguments (``list``, ``load ID``, ``unload ID``), or where nobody can answer a dialog,
    act without asking (:mod:`~knightcode_builtins.llama_cpp.command_args`).
    """
    if args.strip() or not ctx.has_ui:
        from knightcode_builtins.llama_cpp.command_args import run_subcommand

        await run_subcommand(args or "list", ctx)
        return
    while True:
        try:
            await _one_round(ctx)
            return
        except RouterUnreachable as exc:
            choice = await ctx.ui.select(f"{exc}", [RETRY, CLOSE])
            if choice != RETRY:
                return
        except RouterError as exc:
            ctx.ui.notify(str(exc), "error")
            return


async def _one_round(ctx: HookContext) -> None:
    async with RouterClient(await connection_for(ctx)) as client:
        state = await client.state()
        title = _title(client, state)
        entries = {f"{model.id} — {model.describe()}": model for model in state.models}
        choice = await ctx.ui.select(title, [*entries, DOWNLOAD])
        if choice is None or choice == CLOSE:
            return
        if choice == DOWNLOAD:
            from knightcode_builtins.llama_cpp.download import download_flow

            await download_flow(ctx, client)
            return
        model = entries.get(choice)
        if model is not None:
            await _act_on(ctx, client, state, model)


def _title(client: RouterClient, state: RouterState) -> str:
    loaded = sum(1 for model in state.models if model.selectable)
    autoload = "autoload on" if state.autoload else "autoload off"
    return f"llama.cpp router at {client.url} · {loaded} loaded · {autoload}"


async def _act_on(
    ctx: HookContext, client: RouterClient, state: RouterState, model: RouterModel
) -> None:
    ui = ctx.ui
    if model.selectable:
        await client.unload(model.id)
        ui.notify(f"Unloaded {model.id}", "info")
        await refresh_registry(ctx)
        return
    if model.status in ("loading", "downloading"):
        if await ui.confirm("Cancel?", f"Stop {model.status} {model.id}?"):
            await client.unload(model.id)
            ui.notify(f"Stopped {model.status} {model.id}", "info")
        return
    others = [other for other in state.loaded if other.id != model.id]
    if others and not await _handle_others(ctx, client, model, others):
        return
    await client.load(model.id)
    loaded = await run_cancellable(
        ctx,
        wait_until_loaded(client, model.id, progress_reporter(ctx, model.id)),
        title=f"Loading {model.id}…",
        question=f"Stop loading {model.id}? The router frees what it loaded so far.",
        on_cancel=lambda: client.unload(model.id),
    )
    if loaded is None:
        return
    window = f" · context window {loaded.n_ctx} tokens" if loaded.n_ctx else ""
    ui.notify(f"Loaded {model.id}{window}", "info")
    await follow_load(ctx, model.id)


async def _handle_others(
    ctx: HookContext, client: RouterClient, model: RouterModel, others: list[RouterModel]
) -> bool:
    """Ask whether to unload the other loaded models first; False when the user backed out."""
    names = ", ".join(other.id for other in others)
    choice = await ctx.ui.select(
        f"Loading {model.id}: other models are loaded ({names})", [UNLOAD_OTHERS, KEEP_OTHERS]
    )
    if choice == UNLOAD_OTHERS:
        for other in others:
            await client.unload(other.id)
        ctx.ui.notify(f"Unloaded {names}", "info")
        return True
    return bool(choice == KEEP_OTHERS)
