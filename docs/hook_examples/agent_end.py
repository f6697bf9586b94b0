"""Count the messages of a run that is not retried."""

from __future__ import annotations

from knightcode import AgentMessage, HookContext, hookimpl


@hookimpl
def agent_end(messages: list[AgentMessage], will_retry: bool, ctx: HookContext) -> None:
    """Show how many messages the run produced."""
    if not will_retry:
        ctx.ui.set_status("my-plugin", f"{len(messages)} new messages")
