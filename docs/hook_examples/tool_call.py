"""Ask before ``rm -rf``; without anyone to ask, refuse it."""

from __future__ import annotations

from knightcode import Block, HookContext, hookimpl


@hookimpl
async def tool_call(tool_name: str, input: dict[str, object], ctx: HookContext) -> Block | None:
    """Block the call unless the user confirms it."""
    command = str(input.get("command", ""))
    if tool_name != "bash" or "rm -rf" not in command:
        return None
    if not ctx.has_ui or not await ctx.ui.confirm("Dangerous command", command):
        return Block("Blocked by the user: rm -rf")
    return None
