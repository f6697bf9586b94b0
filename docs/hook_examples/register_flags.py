"""A command-line flag, ``--plan-mode``, read by a handler as ``ctx.flags["plan-mode"]``."""

from __future__ import annotations

from collections.abc import Callable

from knightcode import FlagDefinition, HookContext, hookimpl


@hookimpl
def register_flags(register: Callable[..., None]) -> None:
    """Register ``--plan-mode``."""
    register(
        FlagDefinition(
            name="plan-mode", type="boolean", default=False, description="Start in plan mode"
        )
    )


@hookimpl
def session_start(ctx: HookContext) -> None:
    """Say that plan mode is on."""
    if ctx.flags["plan-mode"]:
        ctx.ui.notify("Plan mode: no edits until you say so")
