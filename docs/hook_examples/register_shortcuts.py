"""A key binding of the interactive UI: ``ctrl+shift+w`` shows the working directory."""

from __future__ import annotations

from collections.abc import Callable

from knightcode import HookContext, ShortcutDefinition, hookimpl


def show_cwd(ctx: HookContext) -> None:
    """The shortcut's handler."""
    ctx.ui.notify(f"Working in {ctx.cwd}")


@hookimpl
def register_shortcuts(register: Callable[..., None]) -> None:
    """Register ``ctrl+shift+w``."""
    register(
        ShortcutDefinition(
            key="ctrl+shift+w", handler=show_cwd, description="Show the working directory"
        )
    )
