"""``run_cancellable``: the dialog that lets a user stop a long router operation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from knightcode_builtins.llama_cpp.progress import run_cancellable

from .conftest import Harness
from .scripted_ui import Dialog, ScriptedUI, confirm, select


async def test_a_confirmed_cancel_wins_over_an_operation_ending_in_the_same_instant(
    make_harness: Callable[..., Harness],
) -> None:
    """The user said "stop": a load that finished while they confirmed is freed all the same."""
    finished: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    cancelled: list[str] = []

    def finish_then_yes(dialog: Dialog) -> bool:
        finished.set_result("loaded")  # the operation ends as the user confirms
        return True

    async def on_cancel() -> None:
        cancelled.append("unload")

    ui = ScriptedUI(select("Cancel"), confirm(finish_then_yes))
    harness = make_harness(None, ui=ui)
    result = await run_cancellable(
        harness.ctx, finished, title="Loading m…", question="Stop?", on_cancel=on_cancel
    )
    assert result is None and cancelled == ["unload"]
    assert "Loading m: cancelled" in ui.notes("info")


async def test_an_operation_that_ends_first_is_its_result(
    make_harness: Callable[..., Harness],
) -> None:
    async def quick() -> str:
        return "loaded"

    async def on_cancel() -> None:
        raise AssertionError("nothing to cancel")

    ui = ScriptedUI(select(lambda dialog: asyncio.sleep(30)))  # the user never answers
    harness = make_harness(None, ui=ui)
    result = await run_cancellable(
        harness.ctx, quick(), title="Loading m…", question="Stop?", on_cancel=on_cancel
    )
    assert result == "loaded" and ui.notes() == ""
