"""Prompt history for the editor: this session's user messages, browsed with up/down.

The entries are the session's earlier user messages (the app passes them when a session is
opened or resumed) followed by the prompts submitted since.  Browsing starts from the draft being
typed; the draft is kept and comes back when the user walks down past the newest entry, so
looking something up in the history never loses what was being written (the reference clears it).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["PromptHistory"]

MAX_ENTRIES = 500
"""Older prompts than this are forgotten: the list is browsed one entry per key press."""


class PromptHistory:
    """The entries, oldest first, and where browsing currently is.

    :param entries: earlier prompts, oldest first (empty and repeated ones are skipped)
    """

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self._entries: list[str] = []
        self._index: int | None = None
        self._draft = ""
        self.replace(entries)

    @property
    def entries(self) -> tuple[str, ...]:
        """Every entry, oldest first."""
        return tuple(self._entries)

    @property
    def browsing(self) -> bool:
        """True while an entry (not the draft) is in the editor."""
        return self._index is not None

    def replace(self, entries: Iterable[str]) -> None:
        """Start over with ``entries`` (oldest first), e.g. after switching sessions."""
        self._entries = []
        self.reset()
        for entry in entries:
            self.add(entry)

    def add(self, text: str) -> None:
        """Append a submitted prompt; blank text and a repeat of the newest entry are skipped."""
        self.reset()
        stripped = text.strip()
        if not stripped or (self._entries and self._entries[-1] == stripped):
            return
        self._entries.append(stripped)
        del self._entries[:-MAX_ENTRIES]

    def reset(self) -> None:
        """Stop browsing (the user edited the text, submitted it, or cleared it)."""
        self._index = None
        self._draft = ""

    def previous(self, current: str) -> str | None:
        """The next older entry, or None at the oldest (or with no history).

        :param current: the editor's text, remembered as the draft when browsing starts
        """
        if not self._entries:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(self._entries) - 1
        elif self._index == 0:
            return None
        else:
            self._index -= 1
        return self._entries[self._index]

    def next(self) -> str | None:
        """The next newer entry, the draft after the newest, or None when not browsing."""
        if self._index is None:
            return None
        if self._index >= len(self._entries) - 1:
            draft = self._draft
            self.reset()
            return draft
        self._index += 1
        return self._entries[self._index]
