"""The colours of the transcript: one rich style per role.

A plain frozen dataclass: :mod:`knightcode._themes` builds one from a theme file's colour tokens
(the built-in ``dark`` and ``light`` are theme files too), and every renderer reads its styles
from here, never a literal colour.
Tool blocks and ``!`` commands are marked by a coloured gutter rather than a background fill, so
lines written into the terminal's scrollback carry no trailing padding and reflow cleanly when the
terminal is resized; the user message is the one block with a background.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from rich.style import Style
from rich.theme import Theme as RichStyles

from knightcode._types.messages import ThinkingLevel

if TYPE_CHECKING:
    from rich.syntax import SyntaxTheme

__all__ = ["DARK", "LIGHT", "Theme"]  # noqa: F822 - DARK and LIGHT: see __getattr__


@dataclass(frozen=True, eq=False)  # compared by identity: one object per loaded file
class Theme:
    """Rich styles for every role the transcript, the editor border and the footer show."""

    name: str
    text: Style
    muted: Style
    dim: Style
    accent: Style
    error: Style
    warning: Style
    success: Style
    user_message: Style
    """The user message block: its background (padded to the width) and text colour."""
    assistant_text: Style
    thinking_text: Style
    tool_title: Style
    tool_output: Style
    tool_pending: Style
    """Gutter of a tool block whose result has not arrived (pending or running)."""
    tool_success: Style
    tool_error: Style
    diff_added: Style
    diff_removed: Style
    diff_context: Style
    diff_changed_word: Style
    """Laid over an added/removed line's style on the words that changed in a one-line edit."""
    bash_mode: Style
    """``!cmd`` records: their gutter and command."""
    custom_label: Style
    custom_text: Style
    summary: Style
    """Gutter and label of compaction and branch summaries."""
    syntax: Mapping[tuple[str, ...], Style]
    """Pygments token types (``("Name", "Function")``) to styles: the ``syntax*`` tokens."""
    markdown: RichStyles
    """rich's ``markdown.*`` styles for assistant text (the ``md*`` tokens)."""
    border: Style
    border_accent: Style
    border_muted: Style
    selected: Style
    """The selected row of a list (``selectedBg``)."""
    thinking_off: Style
    thinking_minimal: Style
    thinking_low: Style
    thinking_medium: Style
    thinking_high: Style
    thinking_xhigh: Style
    thinking_max: Style

    @cached_property
    def code_theme(self) -> SyntaxTheme:
        """Syntax colours for code blocks, written files and read output (built on first use:
        rich's syntax module loads pygments, which the first frame does not need).
        """
        from rich.syntax import ANSISyntaxTheme

        return ANSISyntaxTheme(dict(self.syntax))

    def thinking_border(self, level: ThinkingLevel) -> Style:
        """The editor border style that shows ``level``."""
        return {
            "off": self.thinking_off,
            "minimal": self.thinking_minimal,
            "low": self.thinking_low,
            "medium": self.thinking_medium,
            "high": self.thinking_high,
            "xhigh": self.thinking_xhigh,
            "max": self.thinking_max,
        }[level]


def __getattr__(name: str) -> Theme:
    """``DARK`` and ``LIGHT``: the built-in theme files, read on first use."""
    if name in ("DARK", "LIGHT"):
        from knightcode._themes.builtin import builtin_theme

        return builtin_theme(name.lower())
    raise AttributeError(name)
