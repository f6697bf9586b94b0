"""Keys of fullscreen mode: the ``tui.altScreen.*`` actions and the search prompt.

They take precedence over the editor's actions on the same key (the spec: "control the
transcript"), so the app hands every key to :meth:`FullscreenControl.key` before the editor sees
it. Keys are looked up in the registry, so keybindings.json rebinds them like any other action.
While search is open, typed characters go to the query instead of the editor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from knightcode._keys.actions import ALT_SCREEN, ALT_SEARCH

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual import events
    from textual.widgets import Static

    from knightcode._keys.registry import KeyRegistry
    from knightcode._modes.interactive.fullscreen.model import TranscriptModel
    from knightcode._modes.interactive.fullscreen.pane import TranscriptPane

__all__ = ["FullscreenControl"]


def _scroll_actions(model: TranscriptModel) -> dict[str, Callable[[], object]]:
    half = max(1, model.height // 2)
    return {
        "tui.altScreen.pageUp": lambda: model.page(-1),
        "tui.altScreen.pageDown": lambda: model.page(1),
        "tui.altScreen.halfPageUp": lambda: model.scroll(-half),
        "tui.altScreen.halfPageDown": lambda: model.scroll(half),
        "tui.altScreen.lineUp": lambda: model.scroll(-1),
        "tui.altScreen.lineDown": lambda: model.scroll(1),
        "tui.altScreen.previousPrompt": model.previous_prompt,
        "tui.altScreen.nextPrompt": model.next_prompt,
        "tui.altScreen.top": model.to_top,
        "tui.altScreen.bottom": model.to_bottom,
    }


class FullscreenControl:
    """Routes keys to the transcript pane while fullscreen mode runs."""

    def __init__(self, pane: TranscriptPane, bar: Static, registry: KeyRegistry) -> None:
        self._pane = pane
        self._bar = bar
        self._registry = registry
        self.searching = False

    def key(self, event: events.Key) -> bool:
        """Handle ``event`` if it is a fullscreen action (or search input); True if it was."""
        from knightcode._keys.textual_keys import key_ids

        ids = key_ids(event)
        if self.searching:
            return self._search_key(event, ids)
        model = self._pane.model
        actions = _scroll_actions(model)
        for key_id in ids:
            for action in self._registry.actions_for(key_id, ALT_SCREEN, plugins=False):
                if action in actions:
                    actions[action]()
                    self._pane.changed()
                    return True
                if action == "tui.altScreen.search":
                    self.open_search()
                    return True
        return False

    def open_search(self) -> None:
        self.searching = True
        self._pane.model.search("")
        self._draw_bar()

    def close_search(self) -> None:
        self.searching = False
        self._pane.model.close_search()
        self._bar.set_class(True, "-empty")
        self._pane.changed()

    def _search_key(self, event: events.Key, ids: tuple[str, ...]) -> bool:
        model = self._pane.model
        for key_id in ids:
            for action in self._registry.actions_for(key_id, ALT_SEARCH, plugins=False):
                if action == "tui.altScreen.searchClose":
                    self.close_search()
                    return True
                if action in ("tui.altScreen.searchNext", "tui.altScreen.searchPrevious"):
                    model.step(1 if action.endswith("Next") else -1)
                    self._after_search()
                    return True
        if event.key == "backspace":
            model.search(model.query[:-1])
        elif event.character is not None and event.is_printable:
            model.search(model.query + event.character)
        else:
            # Any other key (an editor action, ctrl+c…) closes the search and does its work.
            self.close_search()
            return False
        self._after_search()
        return True

    def progress(self) -> None:
        """The background search went on: show the count as it is now."""
        if self.searching:
            self._draw_bar()

    def _after_search(self) -> None:
        self._draw_bar()
        self._pane.changed()

    def _draw_bar(self) -> None:
        model = self._pane.model
        if not model.query:
            count = ""
        elif model.match_count:
            count = f"  {model.current + 1}/{model.match_count}"
        else:
            count = "  no matches"
        if model.query and not model.search_complete:
            count += " (searching…)"
        keys = self._registry.keys_for
        hint = (
            f"  ({'/'.join(keys('tui.altScreen.searchNext')[:1])} next · "
            f"{'/'.join(keys('tui.altScreen.searchPrevious')[:1])} previous · "
            f"{'/'.join(keys('tui.altScreen.searchClose')[:1])} close)"
        )
        self._bar.update(Text.assemble(("Search: ", "bold"), model.query, count, (hint, "dim")))
        self._bar.set_class(False, "-empty")
