"""Warn about context overflows; leave the compacting to the compaction plugin."""

from __future__ import annotations

from typing import Literal

from knightcode import AssistantMessage, CompactionVerdict, HookContext, hookimpl

Trigger = Literal["before_prompt", "between_turns", "after_run", "overflow", "length", "manual"]


@hookimpl(tryfirst=True)
def session_check_compaction(
    trigger: Trigger, message: AssistantMessage | None, ctx: HookContext
) -> CompactionVerdict | None:
    """Runs before the other handlers and answers None, so they still decide."""
    if trigger == "overflow" and message is not None:
        ctx.ui.notify(f"context overflow: {message.get('errorMessage', 'no details')}", "warning")
    return None
