"""Clear the status when no automatic work remains."""

from __future__ import annotations

from knightcode import HookContext, hookimpl


@hookimpl
def agent_before_settle(aborted: bool, ctx: HookContext) -> None:
    """Remove the status-line entry; say so when the run was aborted."""
    ctx.ui.set_status("my-plugin", None)
    if aborted:
        ctx.ui.notify("Stopped.", "warning")
