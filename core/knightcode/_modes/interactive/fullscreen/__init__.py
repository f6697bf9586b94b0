"""Fullscreen mode: the transcript inside the app, in the terminal's alternate screen.

Textual picks its driver — inline (the normal screen, output above the UI) or fullscreen (the
alternate screen) — when an app starts, and cannot change it while running. Switching therefore
ends the app and starts a new one over the same :class:`AgentSession` (``run_interactive`` loops);
the session, its plugins and the editor's text carry over (:class:`Carry`), so nothing of the
conversation is lost and nothing is started again. Switching waits for an idle agent: a stream
must not lose events between the two apps.

Leaving fullscreen prints nothing twice: the normal screen still holds what the inline app
printed before (``inline_mark`` transcript items); only what was added since is printed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType

    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._modes.interactive.status import StatusArea
    from knightcode._modes.interactive.transcript import Item, ViewOptions

__all__ = ["Carry", "print_since", "refill", "start_fullscreen"]


@dataclass
class Carry:
    """What an app hands to the next one when the mode switches."""

    items: list[Item]
    options: ViewOptions
    inline_mark: int | None
    """Transcript items the normal screen already shows (None: none of them; -1: another
    conversation, replaced while fullscreen)."""
    editor_text: str
    status: StatusArea
    """Plugin statuses and widgets."""


def start_fullscreen(app: KnightcodeApp, header: RenderableType | None) -> None:
    """Fill the pane with the whole conversation, lazily: an entry is rendered when seen."""
    from knightcode._modes.interactive.renderers import AppRenderers
    from knightcode._modes.interactive.transcript import group_messages

    app.screen.add_class("-fullscreen")
    pane = app.fullscreen_pane()
    pane.clear()
    if header is not None:
        pane.append(lambda: header)
    renderers = AppRenderers(app)
    for item, _ in group_messages(app.agent.messages):

        def source(item: Item = item) -> RenderableType | None:
            return renderers.item(item)

        prompt = item.message is not None and item.message["role"] == "user"
        pane.append(source, prompt=prompt)


def refill(app: KnightcodeApp) -> None:
    """Render the conversation afresh (the view options changed, another session opened)."""
    start_fullscreen(app, app.header)


def print_since(app: KnightcodeApp, mark: int) -> None:
    """Back inline: print the items added while fullscreen, below what the screen shows."""
    from knightcode._modes.interactive.renderers import AppRenderers

    renderers = AppRenderers(app)
    for item in app.transcript.items[mark:]:
        app.write_rendered(renderers.item(item))
