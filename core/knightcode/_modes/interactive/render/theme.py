"""The colours of the transcript: one rich style per role, a dark and a light set.

A plain frozen dataclass on purpose: theme files (a later issue) will build one from a mapping of
role names to colours, and every renderer reads its styles from here, never a literal colour.
Tool blocks and ``!`` commands are marked by a coloured gutter rather than a background fill, so
lines written into the terminal's scrollback carry no trailing padding and reflow cleanly when the
terminal is resized; the user message is the one block with a background.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style

from knightcode._types.messages import ThinkingLevel

__all__ = ["DARK", "LIGHT", "Theme"]


@dataclass(frozen=True)
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
    code_theme: str
    """Pygments style for code blocks, written files and read output."""
    thinking_off: Style
    thinking_minimal: Style
    thinking_low: Style
    thinking_medium: Style
    thinking_high: Style
    thinking_xhigh: Style
    thinking_max: Style

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


def _s(definition: str) -> Style:
    return Style.parse(definition)


DARK = Theme(
    name="dark",
    text=_s("none"),
    muted=_s("#8a8f98"),
    dim=_s("#5c6370"),
    accent=_s("#5fafd7"),
    error=_s("#ef5f5f"),
    warning=_s("#e5c07b"),
    success=_s("#87c38a"),
    user_message=_s("#e6e6e6 on #2b2f36"),
    assistant_text=_s("none"),
    thinking_text=_s("italic #8a8f98"),
    tool_title=_s("bold #d7d7d7"),
    tool_output=_s("#b4b9c2"),
    tool_pending=_s("#5c6370"),
    tool_success=_s("#5f9f6f"),
    tool_error=_s("#d75f5f"),
    diff_added=_s("#87c38a"),
    diff_removed=_s("#ef7f7f"),
    diff_context=_s("#7a808a"),
    diff_changed_word=_s("reverse"),
    bash_mode=_s("#d7af5f"),
    custom_label=_s("bold #af87d7"),
    custom_text=_s("#c8c8d0"),
    summary=_s("#8787d7"),
    code_theme="monokai",
    thinking_off=_s("#4b5058"),
    thinking_minimal=_s("#5f6f87"),
    thinking_low=_s("#5f87af"),
    thinking_medium=_s("#5fafd7"),
    thinking_high=_s("#af87d7"),
    thinking_xhigh=_s("#d75fd7"),
    thinking_max=_s("#ff5faf"),
)
"""The default theme, for dark terminal backgrounds."""

LIGHT = Theme(
    name="light",
    text=_s("none"),
    muted=_s("#6a6f78"),
    dim=_s("#9aa0a8"),
    accent=_s("#005f87"),
    error=_s("#c00000"),
    warning=_s("#8a6100"),
    success=_s("#2e7d32"),
    user_message=_s("#1e1e1e on #e8ebf0"),
    assistant_text=_s("none"),
    thinking_text=_s("italic #6a6f78"),
    tool_title=_s("bold #202020"),
    tool_output=_s("#404650"),
    tool_pending=_s("#a0a6ae"),
    tool_success=_s("#4c9a5a"),
    tool_error=_s("#c03030"),
    diff_added=_s("#1f7a32"),
    diff_removed=_s("#b01e1e"),
    diff_context=_s("#70757d"),
    diff_changed_word=_s("reverse"),
    bash_mode=_s("#9a6a00"),
    custom_label=_s("bold #6a3fa0"),
    custom_text=_s("#3a3a48"),
    summary=_s("#5050a0"),
    code_theme="friendly",
    thinking_off=_s("#c0c4ca"),
    thinking_minimal=_s("#8fa0b8"),
    thinking_low=_s("#4f7fa8"),
    thinking_medium=_s("#005f87"),
    thinking_high=_s("#7040a8"),
    thinking_xhigh=_s("#a8309a"),
    thinking_max=_s("#c0205a"),
)
"""For light terminal backgrounds."""
