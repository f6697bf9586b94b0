"""Fuzzy matching for the selectors' type-to-filter search, ranked as the reference ranks it.

A query matches when its characters appear in the text in order; the score (lower is better)
rewards consecutive runs and word starts and penalises gaps, late matches and excess length, so
``gpt4`` ranks ``gpt-4`` above ``gpt-4o-mini``. A query of letters then digits (``gpt4``) also
matches its swapped form (``4gpt``) at a small penalty. Several space-separated tokens must all
match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["fuzzy_filter", "fuzzy_score"]

T = TypeVar("T")

_BOUNDARY = frozenset(" \t\n-_./:")
_LETTERS_DIGITS = re.compile(r"^([a-z]+)([0-9]+)$")
_DIGITS_LETTERS = re.compile(r"^([0-9]+)([a-z]+)$")


def _score(query: str, text: str) -> float | None:
    if not query:
        return 0.0
    if len(query) > len(text):
        return None
    position = 0
    score = 0.0
    last = -1
    run = 0
    for index, char in enumerate(text):
        if position == len(query):
            break
        if char != query[position]:
            continue
        if last == index - 1:
            run += 1
            score -= run * 5
        else:
            run = 0
            if last >= 0:
                score += (index - last - 1) * 2
        if index == 0 or text[index - 1] in _BOUNDARY:
            score -= 10
        score += index * 0.1
        last = index
        position += 1
    if position < len(query):
        return None
    return score + (len(text) - len(query)) * 0.5


def fuzzy_score(query: str, text: str) -> float | None:
    """The score of one token against ``text`` (lower is better), or None when it does not
    match.
    """
    query = query.lower()
    text = text.lower()
    primary = _score(query, text)
    if primary is not None:
        return primary
    swapped = ""
    if (match := _LETTERS_DIGITS.match(query)) or (match := _DIGITS_LETTERS.match(query)):
        swapped = match.group(2) + match.group(1)
    if not swapped:
        return None
    other = _score(swapped, text)
    return None if other is None else other + 5


def fuzzy_filter(items: Sequence[T], query: str, text_of: Callable[[T], str]) -> list[T]:
    """The items matching every whitespace-separated token of ``query``, best first (stable
    among equal scores); all items, in order, for a blank query.
    """
    tokens = query.split()
    if not tokens:
        return list(items)
    scored: list[tuple[float, int, T]] = []
    for order, item in enumerate(items):
        text = text_of(item)
        total = 0.0
        for token in tokens:
            score = fuzzy_score(token, text)
            if score is None:
                break
            total += score
        else:
            scored.append((total, order, item))
    scored.sort(key=lambda row: (row[0], row[1]))
    return [item for _, _, item in scored]
