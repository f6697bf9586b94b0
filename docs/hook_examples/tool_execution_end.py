"""Clear the status when a tool call ends, and warn when it failed."""

from __future__ import annotations

from knightcode import HookContext, ToolResult, hookimpl


@hookimpl
def tool_execution_end(
    tool_name: str, result: ToolResult, is_error: bool, ctx: HookContext
) -> None:
    """``result`` is the final result; ``details`` is the tool's own."""
    ctx.ui.set_status("tools", None)
    if is_error:
        ctx.ui.notify(f"{tool_name} failed", "warning")
