"""Say which model cycling picked."""

from __future__ import annotations

from typing import Literal

from knightcode import HookContext, Model, hookimpl


@hookimpl
def model_select(
    model: Model, source: Literal["set", "cycle", "restore"], ctx: HookContext
) -> None:
    """Notify after ``cycle``, with the model's context window."""
    if source == "cycle":
        ctx.ui.notify(f"Now using {model.ref} ({model.context_window} tokens of context)")
