"""Large pastes: kept aside and shown as a one-line marker, sent whole on submit.

A 300-line log pasted into the prompt would push everything else out of the small inline
region; the editor shows ``[paste #1 +300 lines]`` instead and :meth:`PasteStore.expand`
puts the text back when the prompt is submitted (or handed to the external editor).  A marker
the user deleted is simply not expanded, so deleting the marker deletes the paste.
"""

from __future__ import annotations

import re

__all__ = ["MARKER", "MAX_CHARS", "MAX_LINES", "PasteStore", "clean_paste"]

MAX_LINES = 10
"""A paste of more lines than this is collapsed (the reference's threshold)."""
MAX_CHARS = 1000
"""A paste of more characters than this is collapsed even on few lines."""

MARKER = re.compile(r"\[paste #(\d+)(?: (?:\+\d+ lines|\d+ chars))?\]")
"""A paste marker as the editor writes it (the short ``[paste #3]`` form is accepted too)."""


def clean_paste(text: str) -> str:
    """Unify line endings, turn tabs into spaces and drop control characters, which a terminal
    would otherwise interpret when the text is shown.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    return "".join(char for char in text if char == "\n" or char.isprintable())


class PasteStore:
    """The collapsed pastes of the current prompt, by number."""

    def __init__(self) -> None:
        self._pastes: dict[int, str] = {}
        self._counter = 0

    def collapse(self, text: str) -> str | None:
        """The marker standing for ``text`` if it is large enough to collapse, else None."""
        lines = text.count("\n") + 1
        if lines <= MAX_LINES and len(text) <= MAX_CHARS:
            return None
        self._counter += 1
        self._pastes[self._counter] = text
        if lines > MAX_LINES:
            return f"[paste #{self._counter} +{lines} lines]"
        return f"[paste #{self._counter} {len(text)} chars]"

    def is_marker(self, match: re.Match[str]) -> bool:
        """True when ``match`` (of :data:`MARKER`) names a paste of this prompt."""
        return int(match.group(1)) in self._pastes

    def expand(self, text: str) -> str:
        """``text`` with every marker of a known paste replaced by the pasted text."""

        def replace(match: re.Match[str]) -> str:
            return self._pastes.get(int(match.group(1)), match.group(0))

        return MARKER.sub(replace, text) if self._pastes else text

    def clear(self) -> None:
        """Forget the pastes (the prompt was submitted or replaced)."""
        self._pastes.clear()
        self._counter = 0
