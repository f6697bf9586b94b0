"""Show the last line a running command printed."""

from __future__ import annotations

from knightcode import HookContext, ToolResult, hookimpl


@hookimpl
def tool_execution_update(tool_name: str, partial_result: ToolResult, ctx: HookContext) -> None:
    """A status-line entry with the latest output."""
    texts = [block["text"] for block in partial_result["content"] if block["type"] == "text"]
    last = texts[-1].rstrip().rsplit("\n", 1)[-1] if texts else ""
    ctx.ui.set_status("tools", f"{tool_name}: {last[:60]}")
