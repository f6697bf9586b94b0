"""Streaming markdown in constant work per delta: completed blocks are rendered once, only the
open block is re-rendered.

A reply arrives a few characters at a time. Re-rendering the whole message on every delta costs
O(message) per token, O(message²) per reply. :class:`StreamingMarkdown` instead splits the text
into top-level blocks as it arrives: a block that can no longer change is handed to the caller
once (rendered and written to the scrollback), and the live region re-renders only the open block
(:meth:`StreamingMarkdown.tail`).

Where a block ends:

- a blank line outside a fenced code block ends a paragraph, quote, table or indented code;
- an ATX heading (``# …``) or a thematic break is a block by itself, complete at its newline;
- a fenced code block (````` ``` ````` or ``~~~``, any info string) starts a block and its
  closing fence ends it; blank lines inside it end nothing;
- a list is not split at blank lines: after a blank line, another item or an indented line
  continues it, and only an unindented non-item line ends it, so a loose ordered list is one
  render and keeps its numbering (a list whose items are separated by unindented paragraphs is
  several lists in markdown too, and the renderer keeps each one's start number).

When unsure the splitter keeps lines together: a bigger block only costs a longer tail, while a
wrong split would change what the user sees. Rendering the blocks one by one shows the same text
as rendering the whole message, except for the blank line the renderer puts between top-level
blocks: the caller writes one blank line between consecutive blocks. Link reference definitions
(``[x]: url``) apply only inside their own block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["StreamingMarkdown"]

_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_THEMATIC_BREAK = re.compile(r" {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_FENCE = re.compile(r"( *)(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True)
class _Fence:
    char: str
    length: int
    indent: int


def _indent(line: str) -> int:
    """Columns of leading whitespace (tabs to the next multiple of 4, as markdown counts)."""
    column = 0
    for char in line:
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            break
    return column


def _fence_open(line: str) -> _Fence | None:
    match = _FENCE.match(line.expandtabs(4))
    if match is None:
        return None
    marker, info = match[2], match[3]
    if marker[0] == "`" and "`" in info:  # ```foo``` on one line is inline code, not a fence
        return None
    return _Fence(marker[0], len(marker), len(match[1]))


def _closes(line: str, fence: _Fence) -> bool:
    stripped = line.strip()
    return (
        len(stripped) >= fence.length
        and stripped == fence.char * len(stripped)
        and _indent(line) <= fence.indent + 3
    )


class StreamingMarkdown:
    """Markdown fed in deltas, handed back as completed top-level blocks plus an open tail.

    ``"".join(<every block taken so far>) + tail()`` is always exactly the text appended so far.
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._done: list[str] = []
        self._block: list[str] = []  # complete lines (with their newline) of the open block
        self._partial: list[str] = []  # pieces of the line being received
        self._has_content = False  # the open block has a non-blank line (else: leading blanks)
        self._list = False  # the open block is a list (blank lines do not end it)
        self._gap = False  # a list followed by blank lines: the next line decides
        self._fence: _Fence | None = None

    def append(self, delta: str) -> None:
        """Add streamed text; work is proportional to ``len(delta)`` (amortised)."""
        start = 0
        while True:
            newline = delta.find("\n", start)
            if newline < 0:
                if start < len(delta):
                    self._partial.append(delta[start:])
                return
            piece = delta[start : newline + 1]
            if self._partial:
                self._partial.append(piece)
                piece = "".join(self._partial)
                self._partial.clear()
            self._line(piece)
            start = newline + 1

    def take_completed(self) -> list[str]:
        """The blocks completed since the last call, in order (each to be rendered once)."""
        done, self._done = self._done, []
        return done

    def tail(self) -> str:
        """The open block and the line being received: what the live region shows."""
        return "".join(self._block) + "".join(self._partial)

    def finish(self) -> list[str]:
        """Everything not yet taken, the open block included; the splitter is then empty again.

        A remainder of blank lines only is dropped (it renders to nothing).
        """
        rest = self.tail()
        done = self.take_completed()
        if rest.strip():
            done.append(rest)
        self._reset()
        return done

    # --- one complete line ---------------------------------------------------------------

    def _flush(self) -> None:
        """Complete the open block; leading blank lines alone wait for the next block."""
        if not self._has_content:
            return
        self._done.append("".join(self._block))
        self._block = []
        self._has_content = self._list = self._gap = False

    def _add(self, line: str) -> None:
        self._block.append(line)
        self._has_content = True

    def _line(self, line: str) -> None:
        body = line[:-1]
        fence = self._fence
        if fence is not None:
            if self._list and fence.indent > 0 and body.strip() and _indent(body) < fence.indent:
                # The list item ended, and its code block with it; blank lines before this
                # line were the block's, and now separate the list from what follows.
                self._fence = None
                self._gap = not self._block[-1].strip()
            else:
                self._block.append(line)
                if _closes(body, fence):
                    self._fence = None
                    if not self._list:
                        self._flush()
                return
        if not body.strip():
            self._block.append(line)
            if self._has_content:
                if self._list:
                    self._gap = True
                else:
                    self._flush()
            return
        indent = _indent(body)
        heading = _HEADING.match(body) is not None
        opened = _fence_open(body) if indent <= 3 or self._list else None
        if self._list and indent == 0:
            item = _LIST_ITEM.match(body) is not None
            if (self._gap and not item) or (not self._gap and (heading or opened is not None)):
                self._flush()
        self._gap = False
        if heading and (not self._list or indent == 0):
            self._flush()
            self._add(line)
            self._flush()
            return
        if opened is not None:
            if not self._list:
                self._flush()
            self._add(line)
            self._fence = opened
            return
        if not self._has_content and _THEMATIC_BREAK.match(body):
            self._add(line)
            self._flush()
            return
        if not self._list and _LIST_ITEM.match(body):
            self._list = True
        self._add(line)
