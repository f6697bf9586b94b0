"""Show that the agent is working."""

from __future__ import annotations

from knightcode import HookContext, hookimpl


@hookimpl
def agent_start(ctx: HookContext) -> None:
    """A status-line entry (cleared by the ``agent_before_settle`` example)."""
    ctx.ui.set_status("my-plugin", "working…")
