"""A minimal editor used until the full prompt editor lands (temporary)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.message import Message
from textual.widgets import TextArea

if TYPE_CHECKING:
    from knightcode._keys.registry import KeyRegistry

__all__ = ["BasicEditor"]

_MOVES = {
    "tui.editor.cursorLeft": "action_cursor_left",
    "tui.editor.cursorRight": "action_cursor_right",
    "tui.editor.cursorUp": "action_cursor_up",
    "tui.editor.cursorDown": "action_cursor_down",
    "tui.editor.cursorLineStart": "action_cursor_line_start",
    "tui.editor.cursorLineEnd": "action_cursor_line_end",
    "tui.editor.deleteCharBackward": "action_delete_left",
    "tui.editor.deleteCharForward": "action_delete_right",
    "tui.editor.undo": "action_undo",
}


class BasicEditor(TextArea, inherit_bindings=False):
    """Enter submits, the registry's newline keys insert a newline, app keys bubble."""

    DEFAULT_CSS = """
    BasicEditor { height: auto; min-height: 3; max-height: 12; border: round $accent; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, registry: KeyRegistry, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False)
        self.registry = registry

    async def _on_key(self, event: events.Key) -> None:
        from knightcode._keys.textual_keys import key_ids

        for key_id in key_ids(event):
            actions = self.registry.actions_for(key_id, "main")
            if ("app.exit" in actions and not self.text) or "app.clear" in actions:
                return  # ctrl+d on an empty editor exits, ctrl+c clears: the app's
            action = self.registry.action_for(key_id, "main")
            if action == "tui.input.submit":
                event.stop()
                event.prevent_default()
                text = self.text
                self.text = ""
                self.post_message(self.Submitted(text))
                return
            if action == "tui.input.newLine":
                event.stop()
                event.prevent_default()
                self.insert("\n")
                return
            if action in _MOVES:
                event.stop()
                event.prevent_default()
                getattr(self, _MOVES[action])()
                return
            if action is not None and not action.startswith("tui."):
                return  # an app action: let it bubble
        await super()._on_key(event)
