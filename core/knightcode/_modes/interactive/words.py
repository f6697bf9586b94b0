"""Where the editor's moves and kills land: word boundaries, jump targets, kill ranges.

Pure functions of the text and the cursor, so that they are tested without a terminal.

A word is a run of characters that are neither whitespace nor punctuation; a run of punctuation
counts as a word of its own, so ``alt+b`` over ``foo.bar(`` stops at ``(``, then ``bar``, then
``.``, then ``foo``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = ["PUNCTUATION", "Location", "find_char", "kill_range", "word_left", "word_right"]

Location = tuple[int, int]
"""(row, column), as Textual's TextArea counts them."""

PUNCTUATION = frozenset("(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`")


def _kind(char: str) -> int:
    """0 whitespace, 1 punctuation, 2 word character."""
    if char.isspace():
        return 0
    return 1 if char in PUNCTUATION else 2


def word_left(line: str, col: int) -> int:
    """The column a backward word move from ``col`` lands on."""
    while col > 0 and _kind(line[col - 1]) == 0:
        col -= 1
    if col > 0:
        kind = _kind(line[col - 1])
        while col > 0 and _kind(line[col - 1]) == kind:
            col -= 1
    return col


def word_right(line: str, col: int) -> int:
    """The column a forward word move from ``col`` lands on (the end of the next word)."""
    end = len(line)
    while col < end and _kind(line[col]) == 0:
        col += 1
    if col < end:
        kind = _kind(line[col])
        while col < end and _kind(line[col]) == kind:
            col += 1
    return col


def find_char(
    lines: Sequence[str], cursor: Location, char: str, direction: Literal["forward", "backward"]
) -> Location | None:
    """The next (or previous) ``char`` from the cursor, across lines, or None (jump to char)."""
    row, col = cursor
    if direction == "forward":
        for index in range(row, len(lines)):
            found = lines[index].find(char, col + 1 if index == row else 0)
            if found != -1:
                return index, found
        return None
    for index in range(row, -1, -1):
        end = col if index == row else len(lines[index])
        found = lines[index].rfind(char, 0, max(0, end))
        if found != -1:
            return index, found
    return None


def kill_range(
    lines: Sequence[str], cursor: Location, unit: Literal["word", "line"], *, backward: bool
) -> tuple[Location, Location] | None:
    """What a word kill or a kill to the line's start/end removes: a newline when the cursor is
    already at the line's edge (joining the lines, as emacs does), None at the document's edge.
    """
    row, col = cursor
    line = lines[row]
    if backward:
        if col == 0:
            return None if row == 0 else ((row - 1, len(lines[row - 1])), (row, 0))
        return (row, word_left(line, col) if unit == "word" else 0), (row, col)
    if col >= len(line):
        return None if row >= len(lines) - 1 else ((row, col), (row + 1, 0))
    return (row, col), (row, word_right(line, col) if unit == "word" else len(line))
