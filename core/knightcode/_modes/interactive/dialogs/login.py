"""``/login``: choose a provider, then type its API key (hidden); resolves ``(provider, key)``.

The app writes the key to ``auth.json``. Providers whose sign-in is not an API key (``kind``
other than ``"api_key"``) are listed but cannot be chosen: knightcode has no OAuth flow.
Cancel on the key step goes back to the list; cancel on the list resolves ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.dialogs.base import (
    ACCENT,
    MUTED,
    SUCCESS,
    KeyedInput,
    ListDialog,
)

__all__ = ["LoginDialog", "ProviderItem"]


@dataclass(frozen=True)
class ProviderItem:
    """One provider: whether a key is stored already, and how it signs in."""

    name: str
    has_key: bool = False
    kind: str = "api_key"


class LoginDialog(ListDialog[ProviderItem, tuple[str, str]]):
    """See the module docstring."""

    extra_actions = ("tui.input.submit",)

    def __init__(
        self, providers: Sequence[ProviderItem], *, keys: KeyRegistry | None = None
    ) -> None:
        super().__init__("Log in: choose a provider", providers, keys=keys)
        self.provider: ProviderItem | None = None
        self.key_field = KeyedInput(self, placeholder="API key", password=True, id="login-key")
        self.key_field.display = False

    def compose_fields(self) -> Iterable[Widget]:
        """The search field, and the key field (hidden until a provider is chosen)."""
        yield from super().compose_fields()
        yield self.key_field

    def search_text(self, item: ProviderItem) -> str:
        """The name."""
        return item.name

    def render_item(self, item: ProviderItem, selected: bool) -> Text:
        """Name, then ✓ key stored / the sign-in kind when it is not supported."""
        usable = item.kind == "api_key"
        row = Text(item.name, style=(ACCENT if selected else "") if usable else MUTED)
        if item.has_key:
            row.append("  ✓ key stored", style=SUCCESS)
        if not usable:
            row.append(f"  ({item.kind} sign-in is not supported)", style=MUTED)
        return row

    def render_body(self) -> Text:
        """The list, or the key prompt."""
        if self.provider is not None:
            note = " (replaces the stored key)" if self.provider.has_key else ""
            return Text(f"  API key for {self.provider.name}{note}", style=MUTED)
        return Text("\n").join(self.render_rows())

    def hint_text(self) -> str:
        """The keys of the step."""
        if self.provider is not None:
            return "enter save · esc back"
        return "↑↓ move · enter choose · esc cancel · type to filter"

    async def confirm(self, item: ProviderItem) -> None:
        """Go to the key step."""
        if item.kind != "api_key":
            return
        self.provider = item
        self.title_text = f"Log in to {item.name}"
        if self.search is not None:
            self.search.display = False
        self.key_field.value = ""
        self.key_field.display = True
        self.key_field.focus()

    def _back(self) -> None:
        self.provider = None
        self.title_text = "Log in: choose a provider"
        self.key_field.display = False
        if self.search is not None:
            self.search.display = True
            self.search.focus()

    async def perform(self, action: str) -> bool:
        """On the key step: submit or go back; the field edits everything else."""
        if self.provider is None:
            if action == "tui.input.submit":
                return False  # on the list, enter is tui.select.confirm
            return await super().perform(action)
        if action in ("tui.select.confirm", "tui.input.submit"):
            key = self.key_field.value.strip()
            if key:
                self.resolve((self.provider.name, key))
            return True
        if action == "tui.select.cancel":
            self._back()
            return True
        return False
