"""The transcript's renderers bound to the app (width, theme, toggles); the renderers
themselves (:mod:`.view`, and with it the markdown stack) are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType

    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._modes.interactive.transcript import Item, Turn
    from knightcode._types.messages import AssistantContent

__all__ = ["AppRenderers"]


class AppRenderers:
    """Implements :class:`~.transcript.Renderers` for the app."""

    def __init__(self, app: KnightcodeApp) -> None:
        self._app = app

    def item(self, item: Item) -> RenderableType | None:
        if item.kind == "raw":
            return item.renderable  # the start-up header: no renderer needed
        from knightcode._modes.interactive.view import render_item

        return render_item(item, self._app.render_options())

    def text(self, item: Item) -> str | None:
        renderable = self.item(item)
        return None if renderable is None else self._app.ansi(renderable)

    def markdown(self, text: str) -> RenderableType | None:
        from knightcode._modes.interactive.render.messages import render_assistant_text

        return render_assistant_text(text.strip(), self._app.render_options())

    def block(self, block: AssistantContent) -> RenderableType | None:
        from knightcode._modes.interactive.view import render_block

        return render_block(block, self._app.render_options())

    def tools_and_stop(self, turn: Turn) -> RenderableType | None:
        from knightcode._modes.interactive.view import render_tools_and_stop

        return render_tools_and_stop(turn, self._app.render_options())


def warm_up() -> None:
    """Load the renderers now (called just after the first frame, before the first answer)."""
    import knightcode._modes.interactive.view  # noqa: F401
