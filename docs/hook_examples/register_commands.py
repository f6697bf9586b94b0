"""A slash command: ``/color`` asks for a favourite color."""

from __future__ import annotations

from collections.abc import Callable

from knightcode import CommandDefinition, HookContext, hookimpl


async def pick_color(args: str, ctx: HookContext) -> None:
    """``/color``: a dialog (its default, None, when nobody can answer)."""
    color = await ctx.ui.select("Favourite color?", ["red", "green", "blue"])
    ctx.ui.notify(f"You picked {color or 'nothing'}")


@hookimpl
def register_commands(register: Callable[..., None]) -> None:
    """Register ``/color``."""
    register(CommandDefinition(name="color", handler=pick_color, description="Pick a color"))
