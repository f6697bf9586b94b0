"""``/llama`` → **Download model…**: pick a repository and quantization, let the router fetch it.

The search, the file list and the gated check use the Hub's API from here; the download is
``POST /models`` on the router, which needs the network (and, for a gated repository, an
``HF_TOKEN`` in *its* environment). An exact ``owner/repository[:quant]`` skips the search.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from knightcode_builtins.llama_cpp.hub import (
    HubClient,
    HubError,
    HubModel,
    HubUnreachable,
    parse_exact,
    quantizations,
)
from knightcode_builtins.llama_cpp.loading import wait_for_download
from knightcode_builtins.llama_cpp.progress import run_cancellable
from knightcode_builtins.llama_cpp.router import RouterClient
from knightcode_builtins.llama_cpp.session_model import progress_reporter, refresh_registry

if TYPE_CHECKING:
    from knightcode import ExtensionUI, HookContext

__all__ = ["download_flow"]

SEARCH_PROMPT = "Search Hugging Face for GGUF models, or enter owner/repository[:quant]"


async def download_flow(ctx: HookContext, client: RouterClient) -> None:
    """Ask what to download, check it on the Hub, confirm gated access, then download."""
    ui = ctx.ui
    query = await ui.input("Download model", SEARCH_PROMPT)
    if not query or not query.strip():
        return
    async with HubClient.from_environ(os.environ) as hub:
        exact = parse_exact(query)
        try:
            if exact is None:
                picked = await _pick_repository(ui, hub, query.strip())
                if picked is None:
                    return
                repo, quant = picked, None
            else:
                repo, quant = exact
            info: HubModel | None = await hub.model(repo)
        except HubError as exc:
            if exact is None or not isinstance(exc, HubUnreachable):
                ui.notify(str(exc), "error")
                return
            # An exact name needs no search: the router may still reach the Hub.
            ui.notify(f"{exc}; asking the router to download {query.strip()} unchecked", "warning")
            info = None
        if info is not None:
            choice = await _pick_quant(ui, info, quant)
            if choice is None:
                return
            quant = choice
            if info.gated and not await ui.confirm(
                f"{repo} is gated",
                f"Request access at {hub.page(repo)} first; the llama.cpp server also needs an "
                "HF_TOKEN with access in its environment. Download anyway?",
            ):
                return
    spec = f"{repo}:{quant}" if quant else repo
    await client.download(spec)
    result = await run_cancellable(
        ctx,
        wait_for_download(client, spec, progress_reporter(ctx, spec, "Downloading")),
        title=f"Downloading {spec}…",
        question=f"Cancel the download of {spec}?",
        on_cancel=lambda: client.unload(spec),
    )
    if result is not None:
        ui.notify(f"Downloaded {spec}: select {result.id} in /llama to load it", "info")
        await refresh_registry(ctx)


async def _pick_repository(ui: ExtensionUI, hub: HubClient, query: str) -> str | None:
    results = await hub.search(query)
    if not results:
        ui.notify(f"No GGUF repositories on Hugging Face match {query!r}", "warning")
        return None
    labels = {model.label: model.id for model in results}
    choice = await ui.select(f"GGUF repositories matching {query!r}", list(labels))
    return labels.get(choice) if choice is not None else None


async def _pick_quant(ui: ExtensionUI, info: HubModel, wanted: str | None) -> str | None:
    """The quantization to fetch: the one asked for (checked), the only one, or the user's pick."""
    offered = quantizations(info.files)
    if not offered:
        ui.notify(f"{info.id} has no GGUF files", "error")
        return None
    if wanted is not None:
        match = next((q for q in offered if q.upper() == wanted.upper()), None)
        if match is None:
            ui.notify(f"{info.id} has no {wanted} file; it offers {', '.join(offered)}", "error")
        return match
    if len(offered) == 1:
        return offered[0]
    choice = await ui.select(f"Quantization of {info.id}", offered)
    return choice if choice in offered else None
