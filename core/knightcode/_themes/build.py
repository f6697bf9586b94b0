"""A validated theme file (:class:`~.loader.ThemeSpec`) to the :class:`Theme` the renderers
read: tokens become rich styles, the ``syntax*`` tokens a syntax theme, the ``md*`` tokens
rich's markdown styles.
"""

from __future__ import annotations

from typing import Protocol

from rich.color import Color
from rich.style import Style
from rich.theme import Theme as RichStyles

from knightcode._modes.interactive.render.theme import Theme
from knightcode._themes.loader import ColourValue, ThemeSpec

__all__ = ["build_theme", "colour"]


def colour(value: ColourValue) -> Color | None:
    """A token's colour for rich; ``""`` is None (the terminal's own colour)."""
    if isinstance(value, int):
        return Color.from_ansi(value)
    return Color.parse(value) if value else None


def build_theme(spec: ThemeSpec) -> Theme:
    """The renderers' theme for ``spec`` (which holds every required token)."""
    tokens = spec.colours

    def fg(
        token: str, *, bold: bool = False, italic: bool = False, underline: bool = False
    ) -> Style:
        value = colour(tokens[token])
        return Style(
            color=value, bold=bold or None, italic=italic or None, underline=underline or None
        )

    def bg(token: str) -> Style:
        return Style(bgcolor=colour(tokens[token]))

    return Theme(
        name=spec.name,
        text=fg("text"),
        muted=fg("muted"),
        dim=fg("dim"),
        accent=fg("accent"),
        error=fg("error"),
        warning=fg("warning"),
        success=fg("success"),
        user_message=fg("userMessageText") + bg("userMessageBg"),
        assistant_text=fg("text"),
        thinking_text=fg("thinkingText", italic=True),
        tool_title=fg("toolTitle", bold=True),
        tool_output=fg("toolOutput"),
        tool_pending=fg("dim"),
        tool_success=fg("success"),
        tool_error=fg("error"),
        diff_added=fg("toolDiffAdded"),
        diff_removed=fg("toolDiffRemoved"),
        diff_context=fg("toolDiffContext"),
        diff_changed_word=Style(reverse=True),
        bash_mode=fg("bashMode"),
        custom_label=fg("customMessageLabel", bold=True),
        custom_text=fg("customMessageText"),
        summary=fg("customMessageLabel"),
        syntax=_syntax(fg),
        markdown=_markdown(fg),
        border=fg("border"),
        border_accent=fg("borderAccent"),
        border_muted=fg("borderMuted"),
        selected=bg("selectedBg"),
        thinking_off=fg("thinkingOff"),
        thinking_minimal=fg("thinkingMinimal"),
        thinking_low=fg("thinkingLow"),
        thinking_medium=fg("thinkingMedium"),
        thinking_high=fg("thinkingHigh"),
        thinking_xhigh=fg("thinkingXhigh"),
        thinking_max=fg("thinkingMax" if "thinkingMax" in tokens else "thinkingXhigh"),
    )


class _FgFunction(Protocol):
    """``fg(token, bold=..., italic=..., underline=...)``: a token's colour as a style."""

    def __call__(
        self, token: str, *, bold: bool = False, italic: bool = False, underline: bool = False
    ) -> Style: ...


def _syntax(fg: _FgFunction) -> dict[tuple[str, ...], Style]:
    """Pygments token types (as tuples: ``Name.Function`` is ``("Name", "Function")``) to the
    ``syntax*`` tokens; subtypes inherit (``Name.Builtin.Pseudo`` takes ``Name.Builtin``'s).
    """
    return {
        (): fg("text"),
        ("Comment",): fg("syntaxComment", italic=True),
        ("Keyword",): fg("syntaxKeyword"),
        ("Keyword", "Type"): fg("syntaxType"),
        ("Name", "Function"): fg("syntaxFunction"),
        ("Name", "Decorator"): fg("syntaxFunction"),
        ("Name", "Variable"): fg("syntaxVariable"),
        ("Name", "Attribute"): fg("syntaxVariable"),
        ("Name", "Class"): fg("syntaxType"),
        ("Name", "Builtin"): fg("syntaxType"),
        ("Name", "Exception"): fg("syntaxType"),
        ("Name", "Tag"): fg("syntaxKeyword"),
        ("String",): fg("syntaxString"),
        ("Number",): fg("syntaxNumber"),
        ("Operator",): fg("syntaxOperator"),
        ("Operator", "Word"): fg("syntaxKeyword"),
        ("Punctuation",): fg("syntaxPunctuation"),
    }


def _markdown(fg: _FgFunction) -> RichStyles:
    """Rich's markdown style names to the ``md*`` tokens (rich's own attributes kept: bold
    headings, underlined second-level ones).
    """
    heading = fg("mdHeading")
    return RichStyles(
        {
            "markdown.h1": heading + Style(bold=True, underline=True),
            "markdown.h2": heading + Style(bold=True),
            "markdown.h3": heading + Style(bold=True),
            "markdown.h4": heading + Style(italic=True),
            "markdown.h5": heading + Style(italic=True),
            "markdown.h6": heading,
            "markdown.link": fg("mdLink"),
            "markdown.link_url": fg("mdLinkUrl", underline=True),
            "markdown.code": fg("mdCode"),
            "markdown.code_block": fg("mdCodeBlock"),
            "markdown.block_quote": fg("mdQuote"),
            "markdown.hr": fg("mdHr"),
            "markdown.item.bullet": fg("mdListBullet"),
            "markdown.item.number": fg("mdListBullet"),
            "markdown.list": fg("mdListBullet"),
            "markdown.table.border": fg("mdHr"),
            "markdown.table.header": fg("mdHeading", bold=True),
        },
        inherit=True,
    )
