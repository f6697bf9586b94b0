"""Show how many tools each turn called."""

from __future__ import annotations

from knightcode import HookContext, ToolResultMessage, hookimpl


@hookimpl
def turn_end(turn_index: int, tool_results: list[ToolResultMessage], ctx: HookContext) -> None:
    """A status-line entry per turn, failed calls counted."""
    failed = sum(1 for result in tool_results if result["isError"])
    ctx.ui.set_status(
        "my-plugin", f"turn {turn_index + 1}: {len(tool_results)} tool calls, {failed} failed"
    )
