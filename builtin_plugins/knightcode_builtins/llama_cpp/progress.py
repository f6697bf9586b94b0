"""Long router operations (a load, a download) that the user can cancel, with confirmation.

While the operation runs, a dialog offers **Cancel** (Escape works too); choosing it asks for
confirmation, and only a confirmed cancel stops the operation — a stray key press does not
throw away a half-loaded 30 GB model. The dialog closes by itself when the operation ends.
Without a UI (print and JSON modes) the operation simply runs to its end.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from knightcode_builtins.llama_cpp.session_model import STATUS_KEY

if TYPE_CHECKING:
    from knightcode import ExtensionUI, HookContext

__all__ = ["CANCEL", "run_cancellable"]

T = TypeVar("T")
CANCEL = "Cancel"


async def run_cancellable(
    ctx: HookContext,
    operation: Awaitable[T],
    *,
    title: str,
    question: str,
    on_cancel: Callable[[], Awaitable[None]],
) -> T | None:
    """Run ``operation``; None when the user cancelled it (after ``on_cancel`` ran).

    :param title: the progress dialog's title
    :param question: the confirmation asked before cancelling
    :param on_cancel: stops the operation on the router (e.g. unloads the model)
    :raises: whatever ``operation`` raises
    """
    work = asyncio.ensure_future(operation)
    if not ctx.has_ui:
        try:
            return await work
        finally:
            ctx.ui.set_status(STATUS_KEY, None)
    asker = asyncio.ensure_future(_wait_for_cancel(ctx.ui, title, question))
    try:
        done, _ = await asyncio.wait({work, asker}, return_when=asyncio.FIRST_COMPLETED)
        if asker not in done:
            return work.result()
        # The user confirmed: stop it, even if it ended in the same instant — they asked for it
        # gone, and a load that just finished is freed by on_cancel all the same.
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await work
        await on_cancel()
        ctx.ui.notify(f"{title.rstrip('…. ')}: cancelled", "info")
        return None
    finally:
        for task in (work, asker):
            task.cancel()
        for task in (work, asker):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        ctx.ui.set_status(STATUS_KEY, None)


async def _wait_for_cancel(ui: ExtensionUI, title: str, question: str) -> None:
    """Return once the user chose Cancel (or pressed Escape) and confirmed it."""
    while True:
        await ui.select(title, [CANCEL])  # Escape answers None: it asks to cancel as well
        if await ui.confirm("Cancel?", question):
            return
        await asyncio.sleep(0.05)  # a UI that answers at once must not spin this loop
