"""Ask before ``/new`` leaves the current session."""

from __future__ import annotations

from typing import Literal

from knightcode import Cancel, HookContext, hookimpl


@hookimpl
async def session_before_switch(
    reason: Literal["new", "resume"], ctx: HookContext
) -> Cancel | None:
    """Cancel the switch unless the user confirms (nobody to ask: let it happen)."""
    if (
        reason == "new"
        and ctx.has_ui
        and not await ctx.ui.confirm("New session", "Leave the current session?")
    ):
        return Cancel()
    return None
