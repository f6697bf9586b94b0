r"""The lines ``read`` shows, chosen while the file streams past: bounded memory for any file.

Loading a whole file to cut 50 KB out of it cost 6 GB of memory for a 2 GB file. The
:class:`LineScanner` is fed the file chunk by chunk instead and keeps only what the head
truncation can show — the first ``max_bytes`` (plus a few bytes, so a character cut at the edge
cannot change the decision) or ``max_lines`` lines of the selected span — and counts the rest.

Counting is what keeps the notices exact ("Showing lines 1-2000 of 2500", "90 more lines in
file"): the totals of a file read whole. It is capped too: past :data:`COUNT_LIMIT` bytes beyond
what is kept the scan stops and the totals are lower bounds (:attr:`LineWindow.counted_all` is
False). Only skipping to ``offset`` is not capped — those lines must be found — and that costs
time, not memory; the tool timeout and the abort signal stop it between chunks.

Lines are pieces of ``text.split("\n")`` and bytes are counted as UTF-8 after decoding with
U+FFFD for invalid sequences, exactly as :func:`~knightcode._tools.truncate.truncate_head` counts
them on a decoded file. Decoding restarted at a line start gives the same text as decoding the
whole file, because ``\n`` is never part of a multi-byte sequence.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from knightcode._tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, utf8_len

__all__ = ["COUNT_LIMIT", "READ_CHUNK_SIZE", "LineScanner", "LineWindow"]

READ_CHUNK_SIZE = 4 * 1024 * 1024
"""Bytes asked of the backend per read: few thread hops for a large file, little memory."""

COUNT_LIMIT = 64 * 1024 * 1024
"""Bytes read past the kept text only to count lines and bytes for the notices."""

# Kept beyond max_bytes: a character cut at the edge is held back by the decoder (at most 3
# bytes), and one more byte proves the span is over the limit.
_KEEP_MARGIN = 4


@dataclass(frozen=True)
class LineWindow:
    """What a scan found.

    :param text: the decoded start of the selected span: all of it, or at least enough for the
        head truncation to decide exactly as it would on the whole span
    :param reached_start: the file has line ``start`` (else the offset is beyond the end)
    :param counted_all: the scan reached the end of the file, so the counts below are exact;
        otherwise they are lower bounds
    :param file_lines: lines in the file
    :param span_lines: lines in the selected span (``start`` up to ``limit`` lines, or the end)
    :param span_bytes: UTF-8 bytes of the decoded span
    :param first_line_bytes: UTF-8 bytes of the span's first line; None when the scan stopped
        before that line ended (it is longer than ``span_bytes``)
    """

    text: str
    reached_start: bool
    counted_all: bool
    file_lines: int
    span_lines: int
    span_bytes: int
    first_line_bytes: int | None


def _nth_newline(data: bytes, start: int, n: int) -> int:
    """Index of the ``n``-th newline (counting from 1) at or after ``start``, or -1.

    Halving the range with ``bytes.count`` scans the data about twice in C; a ``find`` per line
    would loop in Python over every line of a chunk of short lines.
    """
    if data.find(b"\n", start) < 0 or data.count(b"\n", start) < n:  # find: memchr, cheap
        return -1
    low, high = start, len(data)  # the answer is in [low, high), with ``n`` newlines from low
    while high - low > 1024:
        middle = (low + high) // 2
        left = data.count(b"\n", low, middle)
        if left >= n:
            high = middle
        else:
            n -= left
            low = middle
    position = low - 1
    for _ in range(n):
        position = data.find(b"\n", position + 1, high)
    return position


def _count_newlines(data: bytes) -> int:
    # ``find`` (memchr) first: counting is ten times slower, and long lines have no newline.
    return data.count(b"\n") if data.find(b"\n") >= 0 else 0


class LineScanner:
    """Feed the file's chunks in order to :meth:`feed` while it returns True, then call
    :meth:`result`.

    :param start: the first line of the span, counting from 0
    :param limit: lines in the span at most (None: to the end of the file)
    """

    def __init__(
        self,
        start: int,
        limit: int | None,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        count_limit: int = COUNT_LIMIT,
    ) -> None:
        self._start = start
        self._limit = limit
        self._keep_lines = max_lines
        self._keep_bytes = max_bytes + _KEEP_MARGIN
        self._count_limit = count_limit
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._kept: list[str] = []
        self._kept_raw = 0
        self._kept_newlines = 0
        self._keeping = True
        self._counted = 0  # bytes read past the kept text
        self._file_newlines = 0
        self._in_span = start == 0
        self._span_over = False
        self._span_newlines = 0
        self._span_bytes = 0
        self._first_line_bytes: int | None = None
        self._eof = False

    def feed(self, chunk: bytes) -> bool:
        """Take the next chunk; False once nothing more is needed."""
        position = 0
        if not self._in_span:
            position = self._skip(chunk)
            if position < 0:
                return True
            self._in_span = True
        if not self._span_over:
            end = -1  # where the span ends in this chunk: before the newline ending its last line
            if self._limit is not None:
                remaining = self._limit - self._span_newlines
                end = position if remaining <= 0 else _nth_newline(chunk, position, remaining)
            if end < 0:
                self._take_span(chunk[position:] if position else chunk)
                return self.wants_more()
            self._take_span(chunk[position:end])
            self._end_span()
            position = end
        self._file_newlines += _count_newlines(chunk[position:] if position else chunk)
        self._counted += len(chunk) - position
        return self.wants_more()

    def wants_more(self) -> bool:
        """Whether another chunk would change the result."""
        if not self._in_span or (self._keeping and not self._span_over):
            return True
        return self._counted < self._count_limit

    def result(self, eof: bool) -> LineWindow:
        """What was found; ``eof``: the last chunk fed was the end of the file."""
        if eof and self._in_span and not self._span_over:
            self._end_span()
        first = self._first_line_bytes
        if first is None and self._span_over:
            first = self._span_bytes  # the span is one line
        return LineWindow(
            text="".join(self._kept),
            reached_start=self._in_span,
            counted_all=eof,
            file_lines=self._file_newlines + 1,
            span_lines=self._span_newlines + 1,
            span_bytes=self._span_bytes,
            first_line_bytes=first,
        )

    def _skip(self, chunk: bytes) -> int:
        """Count newlines up to the start line; the index where the span begins, or -1."""
        wanted = self._start - self._file_newlines
        newline = _nth_newline(chunk, 0, wanted)
        if newline < 0:
            self._file_newlines += _count_newlines(chunk)
            return -1
        self._file_newlines = self._start
        return newline + 1

    def _take_span(self, data: bytes) -> None:
        """Bytes of the span (no newline ending it): keep the head, measure everything."""
        newlines = _count_newlines(data)
        self._file_newlines += newlines
        self._span_newlines += newlines
        if self._keeping:
            cut = min(len(data), self._keep_bytes - self._kept_raw)
            if self._kept_newlines + newlines >= self._keep_lines:
                cut = min(cut, _nth_newline(data, 0, self._keep_lines - self._kept_newlines) + 1)
            head = data[:cut] if cut < len(data) else data
            self._kept.append(self._measure(head))
            self._kept_raw += len(head)
            self._kept_newlines += _count_newlines(head)
            if self._kept_raw >= self._keep_bytes or self._kept_newlines >= self._keep_lines:
                self._keeping = False
            data = data[cut:]
        if data:
            self._counted += len(data)
            self._measure(data)

    def _end_span(self) -> None:
        self._span_over = True
        tail = self._decoder.decode(b"", final=True)
        self._add_text(tail)
        if self._keeping:
            self._kept.append(tail)

    def _measure(self, data: bytes) -> str:
        """Decode ``data`` (continuing the span) and count it; the text."""
        if data.isascii() and not self._decoder.getstate()[0]:
            text = data.decode("ascii")  # no character is pending: ASCII decodes as itself
        else:
            text = self._decoder.decode(data)
        self._add_text(text)
        return text

    def _add_text(self, text: str) -> None:
        size = len(text) if text.isascii() else utf8_len(text)
        if self._first_line_bytes is None:
            newline = text.find("\n")
            if newline >= 0:
                self._first_line_bytes = self._span_bytes + utf8_len(text[:newline])
        self._span_bytes += size
