"""The ``edit`` tool's diff (``details["diff"]``), coloured, with the words that changed marked.

The edit tool writes the reference's display diff (``_tools/edit_diff.generate_diff``): one line
per entry, ``+NN text`` added, ``-NN text`` removed, `` NN text`` context, a number column padded
to the widest line number, and `` … ...`` where unchanged lines were skipped.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Group
from rich.style import Style
from rich.text import Text

from knightcode._modes.interactive.render.blocks import sanitize
from knightcode._modes.interactive.render.theme import Theme

__all__ = ["DiffLine", "diff_lines", "parse_diff", "render_diff"]

_LINE = re.compile(r"^([+\- ])( *\d*) (.*)$")
_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True)
class DiffLine:
    """One line of the display diff: ``kind`` is ``+``, ``-``, `` `` (context) or ``?`` (other)."""

    kind: str
    number: str
    text: str


def parse_diff(diff: str) -> list[DiffLine]:
    """The lines of a display diff; a line of another shape is kept whole as kind ``?``."""
    lines = []
    for raw in diff.split("\n"):
        match = _LINE.match(raw)
        if match is None:
            lines.append(DiffLine("?", "", raw))
        else:
            lines.append(DiffLine(match[1], match[2], match[3]))
    return lines


def _word_spans(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character spans of the words that differ between ``old`` and ``new`` (indentation is not
    marked: a re-indented line would otherwise light up from its first column).
    """
    old_tokens = _TOKENS.findall(old)
    new_tokens = _TOKENS.findall(new)
    old_offsets = _offsets(old_tokens)
    new_offsets = _offsets(new_tokens)
    old_spans: list[tuple[int, int]] = []
    new_spans: list[tuple[int, int]] = []
    matcher = difflib.SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append(_span(old, old_offsets, i1, i2))
        if j2 > j1:
            new_spans.append(_span(new, new_offsets, j1, j2))
    return old_spans, new_spans


def _offsets(tokens: Sequence[str]) -> list[int]:
    offsets = [0]
    for token in tokens:
        offsets.append(offsets[-1] + len(token))
    return offsets


def _span(text: str, offsets: Sequence[int], first: int, last: int) -> tuple[int, int]:
    start, end = offsets[first], offsets[last]
    while start < end and text[start].isspace():
        start += 1
    return start, end


def _line_text(line: DiffLine, style: Style, theme: Theme) -> Text:
    text = Text(no_wrap=False)
    text.append(line.kind if line.kind != "?" else " ", style=style)
    text.append(line.number, style=theme.dim)
    text.append(" ")
    text.append(line.text, style=style)
    return text


def _mark(text: Text, spans: Sequence[tuple[int, int]], offset: int, style: Style) -> None:
    for start, end in spans:
        if end > start:
            text.stylize(style, offset + start, offset + end)


def diff_lines(diff: str, theme: Theme) -> list[Text]:
    """One styled line per diff line: added lines in ``diff_added``, removed in
    ``diff_removed``, context muted; a one-line replacement (one ``-`` line then one ``+`` line)
    marks the words that changed.
    """
    lines = parse_diff(sanitize(diff))
    rendered: list[Text] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        pair = (
            line.kind == "-"
            and i + 1 < len(lines)
            and lines[i + 1].kind == "+"
            and (i + 2 >= len(lines) or lines[i + 2].kind != "+")
            and (i == 0 or lines[i - 1].kind != "-")
        )
        if pair:
            added = lines[i + 1]
            old_text = _line_text(line, theme.diff_removed, theme)
            new_text = _line_text(added, theme.diff_added, theme)
            old_spans, new_spans = _word_spans(line.text, added.text)
            _mark(old_text, old_spans, 2 + len(line.number), theme.diff_changed_word)
            _mark(new_text, new_spans, 2 + len(added.number), theme.diff_changed_word)
            rendered += [old_text, new_text]
            i += 2
            continue
        style = {"+": theme.diff_added, "-": theme.diff_removed}.get(line.kind, theme.diff_context)
        rendered.append(_line_text(line, style, theme))
        i += 1
    return rendered


def render_diff(diff: str, theme: Theme) -> Group:
    """``diff`` whole, coloured (see :func:`diff_lines`)."""
    return Group(*diff_lines(diff, theme))
