"""A script's output, bounded: the beginning and the end are kept, the middle is cut.

A script that prints a 1 GB log must not fill the host's memory nor the model's context. The
first half of the budget keeps what the script printed first (usually what it was asked for),
the second half the end (a traceback, a final summary); what lies between is counted and
replaced by a note saying how much was cut.
"""

from __future__ import annotations

import codecs

__all__ = ["BoundedOutput"]


class BoundedOutput:
    """Collects a process's output chunks (``on_output``) within ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head: list[str] = []
        self._head_size = 0
        self._tail = ""
        self.total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, chunk: bytes) -> None:
        """One chunk of output (bytes may split a character; the decoder holds them)."""
        self._add(self._decoder.decode(chunk))

    def _add(self, text: str) -> None:
        self.total += len(text)
        room = self._head_limit - self._head_size
        if room > 0:
            self._head.append(text[:room])
            self._head_size += min(room, len(text))
            text = text[room:]
        if text:
            self._tail += text
            if len(self._tail) > 2 * self._tail_limit:  # trimmed now and then: linear overall
                self._tail = self._tail[-self._tail_limit :]

    @property
    def truncated(self) -> bool:
        """Whether anything was cut."""
        return self.total > self.limit

    def text(self) -> str:
        """Everything, or the head, a note and the tail when it was longer than ``limit``."""
        self._add(self._decoder.decode(b"", final=True))
        head = "".join(self._head)
        if not self.truncated:
            return head + self._tail
        tail = self._tail[-self._tail_limit :] if self._tail_limit else ""
        cut = self.total - len(head) - len(tail)
        note = (
            f"\n[… {cut:,} characters of output cut here: {self.total:,} in all, more than "
            f"the {self.limit:,} shown (tools.json codemode.maxOutputChars). Print less, or "
            "write it to a file and read or grep that …]\n"
        )
        return head + note + tail
