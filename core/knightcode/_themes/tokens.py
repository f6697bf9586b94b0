"""The colour tokens of a theme file: one table that the loader, the JSON Schema
(``schemas/theme.schema.json``, generated from it) and docs/themes.md agree on.

The token names are the reference's, so a theme written for it loads here unchanged. A few name
things knightcode does not draw (the reference's status line, tool box backgrounds: knightcode
marks tool blocks with a gutter, not a fill, so the scrollback reflows on resize); they are
accepted, optional, and listed as unused in the docs, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OPTIONAL", "REQUIRED", "TOKENS", "Token"]


@dataclass(frozen=True)
class Token:
    """One colour token.

    :param name: the key under ``colors``
    :param description: what it colours (the schema's description)
    :param required: whether a theme file must define it
    :param used: whether knightcode draws with it (unused tokens are accepted and ignored)
    """

    name: str
    description: str
    required: bool = True
    used: bool = True


TOKENS: tuple[Token, ...] = (
    # Core UI
    Token("accent", "Accent: selected items, file paths, hints"),
    Token("border", "Normal borders"),
    Token("borderAccent", "Highlighted borders"),
    Token("borderMuted", "Subtle borders"),
    Token("success", "Success states"),
    Token("error", "Error states"),
    Token("warning", "Warning states"),
    Token("muted", "Secondary text"),
    Token("dim", "Tertiary text (line numbers, hints)"),
    Token("text", "Default text (usually \"\", the terminal's colour)"),
    Token("thinkingText", "Thinking block text"),
    # Backgrounds and content
    Token("selectedBg", "Selected line background"),
    Token("userMessageBg", "User message background"),
    Token("userMessageText", "User message text"),
    Token("customMessageBg", "Extension message background", used=False),
    Token("customMessageText", "Extension message and summary text"),
    Token("customMessageLabel", "Extension message label and summary gutter"),
    Token("toolPendingBg", "Tool box background while pending", used=False),
    Token("toolSuccessBg", "Tool box background after success", used=False),
    Token("toolErrorBg", "Tool box background after an error", used=False),
    Token("toolTitle", "Tool title"),
    Token("toolOutput", "Tool output text"),
    # Markdown
    Token("mdHeading", "Markdown headings"),
    Token("mdLink", "Markdown link text"),
    Token("mdLinkUrl", "Markdown link address"),
    Token("mdCode", "Markdown inline code"),
    Token("mdCodeBlock", "Markdown code block text"),
    Token("mdCodeBlockBorder", "Markdown code block fences", used=False),
    Token("mdQuote", "Markdown block quote text"),
    Token("mdQuoteBorder", "Markdown block quote border", used=False),
    Token("mdHr", "Markdown horizontal rule"),
    Token("mdListBullet", "Markdown list bullets and numbers"),
    # Tool diffs
    Token("toolDiffAdded", "Added lines in diffs"),
    Token("toolDiffRemoved", "Removed lines in diffs"),
    Token("toolDiffContext", "Context lines in diffs"),
    # Syntax highlighting
    Token("syntaxComment", "Syntax: comments"),
    Token("syntaxKeyword", "Syntax: keywords"),
    Token("syntaxFunction", "Syntax: function names"),
    Token("syntaxVariable", "Syntax: variables"),
    Token("syntaxString", "Syntax: strings"),
    Token("syntaxNumber", "Syntax: numbers"),
    Token("syntaxType", "Syntax: types"),
    Token("syntaxOperator", "Syntax: operators"),
    Token("syntaxPunctuation", "Syntax: punctuation"),
    # Thinking level borders (the editor's border)
    Token("thinkingOff", "Editor border: thinking off"),
    Token("thinkingMinimal", "Editor border: minimal thinking"),
    Token("thinkingLow", "Editor border: low thinking"),
    Token("thinkingMedium", "Editor border: medium thinking"),
    Token("thinkingHigh", "Editor border: high thinking"),
    Token("thinkingXhigh", "Editor border: extra high thinking"),
    Token("thinkingMax", "Editor border: max thinking (default: thinkingXhigh)", required=False),
    # Bash mode
    Token("bashMode", "! command records and the editor border in bash mode"),
    # The reference's status line: accepted, not drawn (knightcode's footer is muted text).
    *(
        Token(f"statusLine{part}", f"Status line: {part.lower()} (unused)", False, False)
        for part in (
            "Bg", "Sep", "Model", "Path", "GitClean", "GitDirty", "Context", "Spend",
            "Staged", "Dirty", "Untracked", "Output", "Cost", "Subagents",
        )
    ),
)  # fmt: skip
"""Every token, in the order of the docs."""

REQUIRED = frozenset(token.name for token in TOKENS if token.required)
OPTIONAL = frozenset(token.name for token in TOKENS if not token.required)
