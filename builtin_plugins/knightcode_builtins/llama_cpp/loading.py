"""Loading and downloading through the router, with progress, until the router says it is done.

``POST /models/load`` answers at once; the model's status then goes ``loading`` -> ``loaded``
(or back to ``unloaded`` with ``failed: true``). The truth is polled from ``GET /models`` (a
few requests per second, cheap); the status stream ``GET /models/sse`` is followed beside it
only for progress values, so a router whose stream is missing or cut still works.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from knightcode_builtins.llama_cpp.errors import CorruptModel, LoadFailed, RouterError
from knightcode_builtins.llama_cpp.gguf_check import diagnose_gguf
from knightcode_builtins.llama_cpp.router import RouterClient
from knightcode_builtins.llama_cpp.router_models import RouterModel

__all__ = ["load_failure", "load_model", "wait_for_download", "wait_until_loaded"]

Progress = Callable[[str, float | None], None]
"""``on_progress(status, fraction)``: ``fraction`` is None when the router gives no number."""

POLL_SECONDS = 0.1
# A load the router has not even started after this long was refused or stopped at once.
START_GRACE_SECONDS = 2.0


def load_failure(model: RouterModel, client: RouterClient) -> LoadFailed:
    """The error for a failed load: :class:`CorruptModel` when the file is readable here and
    broken, else :class:`LoadFailed`.
    """
    if model.path and client.connection.is_local:
        problem = diagnose_gguf(model.path)
        if problem:
            return CorruptModel(model.id, model.path, problem)
    return LoadFailed(model.id, model.exit_code)


async def load_model(
    client: RouterClient, model_id: str, on_progress: Progress | None = None
) -> RouterModel:
    """Load ``model_id`` and wait until it is loaded; returns its entry (with ``n_ctx``).

    :raises LoadFailed: the router reported the load as failed (:class:`CorruptModel` for a
        broken file)
    :raises RouterError: the load was stopped by someone else, or the router failed
    """
    await client.load(model_id)
    return await wait_until_loaded(client, model_id, on_progress)


async def wait_until_loaded(
    client: RouterClient, model_id: str, on_progress: Progress | None = None
) -> RouterModel:
    """Wait for a load in progress to end (see :func:`load_model`)."""
    follower = asyncio.create_task(_follow_progress(client, model_id, on_progress))
    loop = asyncio.get_running_loop()
    started = loop.time()
    seen_loading = False
    try:
        while True:
            model = await client.get_model(model_id)
            if model.selectable:
                return model
            if model.status == "loading":
                seen_loading = True
            elif model.status == "unloaded":
                if model.failed:
                    raise load_failure(model, client)
                if seen_loading or loop.time() - started > START_GRACE_SECONDS:
                    raise RouterError(f"Loading {model_id!r} was stopped: the model was unloaded.")
            await asyncio.sleep(POLL_SECONDS)
    finally:
        follower.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await follower


async def _follow_progress(
    client: RouterClient, model_id: str, on_progress: Progress | None
) -> None:
    """Report the stream's status and progress events for one model; best effort."""
    if on_progress is None:
        return
    on_progress("loading", None)
    try:
        async for event in client.status_events():
            data = event.get("data")
            if event.get("model") != model_id or not isinstance(data, dict):
                continue
            progress = data.get("progress")
            value = progress.get("value") if isinstance(progress, dict) else progress
            on_progress(
                str(data.get("status", "")),
                float(value) if isinstance(value, (int, float)) else None,
            )
    except RouterError:
        return  # the poller sees the same failure and reports it


async def wait_for_download(
    client: RouterClient, spec: str, on_progress: Progress | None = None
) -> RouterModel:
    """Wait for a download started with ``POST /models`` to end; returns the new model.

    The router runs the download as a temporary instance named ``spec``; when it exits, the
    router re-reads its sources and the model appears (id ``spec`` or the repository name).

    :raises RouterError: the instance ended but no such model appeared (no network on the
        router, a gated or missing repository)
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    repo = spec.split(":", 1)[0]
    while True:
        models = await client.list_models()
        by_id = {model.id: model for model in models}
        current = by_id.get(spec)
        if current is not None and current.status == "downloading":
            if on_progress is not None:
                on_progress("downloading", current.progress)
        elif loop.time() - started > POLL_SECONDS * 5 or current is not None:
            found = (
                current
                or by_id.get(repo)
                or next((m for m in models if m.id.startswith(repo + ":")), None)
            )
            if found is not None and found.status != "downloading":
                return found
            if found is None:
                raise RouterError(
                    f"The router could not download {spec}: it lists no such model afterwards. "
                    "The router itself needs access to huggingface.co (and HF_TOKEN in its "
                    "environment for gated repositories); its log says more."
                )
        await asyncio.sleep(POLL_SECONDS)
