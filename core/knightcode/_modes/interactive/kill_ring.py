"""The editor's kill ring, as in emacs: killed text is kept for yanking back.

Consecutive kills grow one entry (``ctrl+w ctrl+w`` kills two words, yanked back as one piece),
a backward kill prepending and a forward kill appending so that the entry reads in text order.
Yank-pop rotates the ring so that repeated presses walk back through older kills.
"""

from __future__ import annotations

from collections import deque

__all__ = ["KillRing"]


class KillRing:
    """A bounded ring of killed texts; the newest entry is the one yanked.

    :param size: how many kills are kept (the oldest is dropped beyond that)
    """

    def __init__(self, size: int = 60) -> None:
        self._ring: deque[str] = deque(maxlen=size)

    def __len__(self) -> int:
        return len(self._ring)

    def push(self, text: str, *, prepend: bool, accumulate: bool) -> None:
        """Record killed ``text``.

        :param prepend: the kill went backwards (the text came before the previous kill)
        :param accumulate: the previous command was a kill too: grow its entry instead of
            starting a new one
        """
        if not text:
            return
        if accumulate and self._ring:
            last = self._ring.pop()
            text = text + last if prepend else last + text
        self._ring.append(text)

    def peek(self) -> str | None:
        """The entry a yank inserts (the newest), or None when nothing was killed."""
        return self._ring[-1] if self._ring else None

    def rotate(self) -> None:
        """Make the next older entry the newest (yank-pop); the newest goes to the back."""
        if len(self._ring) > 1:
            self._ring.rotate(1)
