"""Word boundaries for the editor's word moves and kills, as the reference defines them.

A word is a run of characters that are neither whitespace nor punctuation; a run of punctuation
counts as a word of its own, so ``alt+b`` over ``foo.bar(`` stops at ``(``, then ``bar``, then
``.``, then ``foo``.  Moves stay within the line; the editor handles crossing line ends.
"""

from __future__ import annotations

__all__ = ["PUNCTUATION", "word_left", "word_right"]

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
