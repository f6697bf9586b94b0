"""Answer ``ping`` without the model, and expand ``?? question``."""

from __future__ import annotations

from knightcode import Handled, HookContext, Transform, hookimpl


@hookimpl
def input(text: str, ctx: HookContext) -> Transform | Handled | None:
    """Handle, rewrite, or pass the input on (None)."""
    if text.strip() == "ping":
        ctx.ui.notify("pong")
        return Handled()
    if text.startswith("?? "):
        return Transform("Explain briefly: " + text[3:])
    return None
