"""Dialogs draw their style constants in the theme's colours."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from knightcode._modes.interactive.dialogs.base import ACCENT, MUTED, restyle
from knightcode._modes.interactive.render.theme import LIGHT


def test_restyle_swaps_the_named_styles_and_keeps_the_rest() -> None:
    text = Text("title", style=MUTED)
    text.append(" chosen", style=ACCENT)
    text.append(" plain", style="italic")
    styles = {ACCENT: LIGHT.accent + Style(bold=True), MUTED: LIGHT.muted}
    swapped = restyle(text, styles)
    assert isinstance(swapped, Text)
    assert swapped.style == LIGHT.muted
    assert [span.style for span in swapped.spans] == [styles[ACCENT], "italic"]
    assert text.style == MUTED  # the original is left alone
    assert restyle(text, {}) is text
