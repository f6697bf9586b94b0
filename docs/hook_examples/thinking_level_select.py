"""Show the thinking level in the status line."""

from __future__ import annotations

from knightcode import HookContext, ThinkingLevel, hookimpl


@hookimpl
def thinking_level_select(level: ThinkingLevel, ctx: HookContext) -> None:
    """No entry when thinking is off."""
    ctx.ui.set_status("thinking", None if level == "off" else f"thinking: {level}")
