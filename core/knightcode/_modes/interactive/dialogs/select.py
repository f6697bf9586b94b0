"""The four dialogs plugins open through ``ctx.ui``: select, confirm, input, editor.

They mirror the contract of :class:`knightcode._modes.rpc.ui.RpcUI`: a ``timeout`` resolves the
dialog to its default (``None`` for a choice or a text, ``False`` for a confirmation; the app
maps a cancelled confirmation to ``False`` too) and a countdown is shown meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.widget import Widget

from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.dialogs.base import (
    ACCENT,
    MUTED,
    Dialog,
    KeyedInput,
    KeyedTextArea,
    ListDialog,
)

__all__ = ["ConfirmDialog", "EditorDialog", "InputDialog", "SelectDialog", "SelectItem"]


@dataclass(frozen=True)
class SelectItem:
    """One option: ``label`` is shown, ``value`` returned (the label when None).

    :param description: shown greyed after the label
    :param disabled_reason: set for an option that cannot be chosen; shown instead of the
        description
    """

    label: str
    value: str | None = None
    description: str | None = None
    disabled_reason: str | None = None

    @property
    def result(self) -> str:
        """What choosing this option returns."""
        return self.label if self.value is None else self.value


def _single_line(text: str) -> str:
    # Line breaks and tabs become spaces; runs of spaces stay (plugins align columns with them).
    return " ".join(text.replace("\t", " ").splitlines()).strip()


class SelectDialog(ListDialog[SelectItem, str]):
    """Choose one option; resolves its value.

    :param options: labels, or :class:`SelectItem` for values, descriptions and disabled ones
    """

    def __init__(
        self,
        title: str,
        options: Sequence[str | SelectItem],
        *,
        keys: KeyRegistry | None = None,
        timeout: float | None = None,
    ) -> None:
        items = [o if isinstance(o, SelectItem) else SelectItem(o) for o in options]
        super().__init__(title, items, keys=keys, timeout=timeout)

    def search_text(self, item: SelectItem) -> str:
        """Label and description."""
        return f"{item.label} {item.description or ''}"

    def render_item(self, item: SelectItem, selected: bool) -> Text:
        """Label, then the description or the reason it is disabled."""
        if item.disabled_reason is not None:
            row = Text(_single_line(item.label), style=MUTED + " strike")
            row.append(f"  {_single_line(item.disabled_reason)}", style=MUTED)
            return row
        row = Text(_single_line(item.label), style=ACCENT if selected else "")
        if item.description:
            row.append(f"  {_single_line(item.description)}", style=MUTED)
        return row

    def hint_text(self) -> str:
        """The keys."""
        return "↑↓ move · enter select · esc cancel · type to filter"

    async def confirm(self, item: SelectItem) -> None:
        """A disabled option cannot be chosen (the dialog stays open)."""
        if item.disabled_reason is None:
            self.resolve(item.result)


class ConfirmDialog(Dialog[bool]):
    """Yes or no: ``y``/``n``, or up/down and confirm; resolves True/False (None on cancel)."""

    def __init__(
        self,
        title: str,
        message: str,
        *,
        keys: KeyRegistry | None = None,
        timeout: float | None = None,
    ) -> None:
        super().__init__(title, keys=keys, timeout=timeout, timeout_result=False)
        self.message = message
        self.yes = True

    def render_body(self) -> RenderableType:
        """The message and the two choices."""
        body = Text(self.message + "\n\n")
        for label, value in (("Yes", True), ("No", False)):
            chosen = self.yes == value
            body.append("→ " if chosen else "  ", style=ACCENT if chosen else "")
            body.append(label + "\n", style=ACCENT if chosen else "")
        body.rstrip()
        return body

    def hint_text(self) -> str:
        """The keys."""
        return "y yes · n no · ↑↓ move · enter confirm · esc cancel"

    async def perform(self, action: str) -> bool:
        """Up/down/left/right switch, confirm answers."""
        if action in ("tui.select.up", "tui.select.down", "tui.select.left", "tui.select.right"):
            self.yes = not self.yes
        elif action == "tui.select.confirm":
            self.resolve(self.yes)
        else:
            return await super().perform(action)
        return True

    async def perform_key(self, event: events.Key) -> bool:
        """``y`` and ``n`` answer at once."""
        if event.character in ("y", "Y"):
            self.resolve(True)
            return True
        if event.character in ("n", "N"):
            self.resolve(False)
            return True
        return False


class InputDialog(Dialog[str]):
    """One line of text; resolves it on confirm (``password`` hides what is typed)."""

    extra_actions = ("tui.input.submit",)

    def __init__(
        self,
        title: str,
        placeholder: str = "",
        *,
        password: bool = False,
        value: str = "",
        keys: KeyRegistry | None = None,
        timeout: float | None = None,
    ) -> None:
        super().__init__(title, keys=keys, timeout=timeout)
        self.field = KeyedInput(self, value=value, placeholder=placeholder, password=password)

    def compose_fields(self) -> Iterable[Widget]:
        """The field."""
        return (self.field,)

    def focus_target(self) -> Widget:
        """The field."""
        return self.field

    def hint_text(self) -> str:
        """The keys."""
        return "enter submit · esc cancel"

    async def perform(self, action: str) -> bool:
        """Confirm/submit resolves the text; other select keys edit the field."""
        if action in ("tui.select.confirm", "tui.input.submit"):
            self.resolve(self.field.value)
            return True
        return await super().perform(action)


class EditorDialog(Dialog[str]):
    """Multi-line text: ``tui.input.submit`` resolves it, ``tui.input.newLine`` breaks the line
    (the editor's keys, not the list's ``tui.select.confirm``).
    """

    extra_actions = ("tui.input.newLine", "tui.input.submit")

    def __init__(
        self,
        title: str,
        prefill: str = "",
        *,
        keys: KeyRegistry | None = None,
        timeout: float | None = None,
    ) -> None:
        super().__init__(title, keys=keys, timeout=timeout)
        self.field = KeyedTextArea(self, text=prefill)

    def compose_fields(self) -> Iterable[Widget]:
        """The text area."""
        return (self.field,)

    def focus_target(self) -> Widget:
        """The text area."""
        return self.field

    def hint_text(self) -> str:
        """The keys, as bound."""
        submit = ", ".join(self.keys.keys_for("tui.input.submit")) or "(unbound)"
        newline = ", ".join(self.keys.keys_for("tui.input.newLine")) or "(unbound)"
        return f"{submit} submit · {newline} new line · esc cancel"

    async def perform(self, action: str) -> bool:
        """Submit, new line and cancel; the select moves belong to the text area."""
        if action == "tui.input.submit":
            self.resolve(self.field.text)
        elif action == "tui.input.newLine":
            self.field.insert("\n")
        elif action == "tui.select.cancel":
            self.cancel()
        else:
            return False
        return True
