"""Refuse clones (forks that include the entry) when nobody can confirm them."""

from __future__ import annotations

from typing import Literal

from knightcode import Cancel, ForkOptions, HookContext, hookimpl


@hookimpl
def session_before_fork(
    position: Literal["before", "at"], ctx: HookContext
) -> Cancel | ForkOptions | None:
    """Cancel a headless clone; let every other fork go ahead."""
    if position == "at" and not ctx.has_ui:
        return Cancel()
    return None
