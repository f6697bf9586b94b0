"""Tell the user when the model's answer ended in an error."""

from __future__ import annotations

from knightcode import AgentMessage, HookContext, hookimpl


@hookimpl
def message_end(message: AgentMessage, ctx: HookContext) -> None:
    """The final message: for an assistant message, ``stopReason`` is set."""
    if message["role"] == "assistant" and message["stopReason"] == "error":
        ctx.ui.notify(message.get("errorMessage", "the request failed"), "error")
