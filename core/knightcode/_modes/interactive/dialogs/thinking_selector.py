"""``/thinking``: choose the thinking level among those the model supports.

Confirm sets it for the session; ``app.thinking.save`` sets it and asks the app to save it as
``defaultThinkingLevel``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from knightcode._keys.actions import SELECT, THINKING_SELECTOR
from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.dialogs.base import ACCENT, MUTED, SUCCESS, ListDialog

__all__ = ["LEVEL_DESCRIPTIONS", "ThinkingChoice", "ThinkingSelector"]

LEVEL_DESCRIPTIONS: dict[str, str] = {
    "off": "No reasoning",
    "minimal": "Very brief reasoning",
    "low": "Light reasoning",
    "medium": "Moderate reasoning",
    "high": "Deep reasoning",
    "xhigh": "Extra deep reasoning",
    "max": "The model's maximum reasoning",
}


@dataclass(frozen=True)
class ThinkingChoice:
    """The chosen level, and whether to save it as the default."""

    level: str
    save: bool = False


class ThinkingSelector(ListDialog[str, ThinkingChoice]):
    """See the module docstring.

    :param levels: the levels offered, in order (the model's supported ones)
    :param current: the session's level, selected at first and marked
    """

    contexts = (THINKING_SELECTOR, SELECT)
    search_mode = "none"

    def __init__(
        self, levels: Sequence[str], current: str, *, keys: KeyRegistry | None = None
    ) -> None:
        super().__init__("Thinking level", levels, keys=keys)
        self.current_level = current
        if current in self.shown:
            self.selected = self.shown.index(current)

    def render_item(self, item: str, selected: bool) -> Text:
        """Level, description, ✓ for the current one."""
        row = Text(item.ljust(8), style=ACCENT if selected else "")
        row.append("  " + LEVEL_DESCRIPTIONS.get(item, ""), style=MUTED)
        if item == self.current_level:
            row.append(" ✓", style=SUCCESS)
        return row

    def hint_text(self) -> str:
        """The keys, as bound."""
        save = ", ".join(self.keys.keys_for("app.thinking.save")) or "(unbound)"
        return f"enter use · {save} use and save as default · esc cancel"

    async def perform(self, action: str) -> bool:
        """``app.thinking.save`` picks and saves."""
        if action == "app.thinking.save":
            item = self.current
            if item is not None:
                self.resolve(ThinkingChoice(item, save=True))
            return True
        return await super().perform(action)

    async def confirm(self, item: str) -> None:
        """Use the level for the session."""
        self.resolve(ThinkingChoice(item))
