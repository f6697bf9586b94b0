"""``OutputBuffer``: bounded memory for a command's streaming output, spilling to a temp file.

Only a decoded tail (at most a few times the byte limit) is kept in memory for the model's view;
once the output outgrows the limits the raw bytes go to a spill file
(``$TMPDIR/knightcode-<pid>-<random>/<prefix>-<16 hex>.log``; head and tail kept within a cap,
see :mod:`~knightcode._tools.spill`) so the model can be pointed at the full text.
"""

from __future__ import annotations

import codecs
import contextlib
from dataclasses import dataclass, replace

from knightcode._tools.spill import SPILL_HEAD_BYTES, SPILL_TAIL_BYTES, SpillFile
from knightcode._tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    truncate_tail,
    utf8_len,
)

__all__ = ["OutputBuffer", "OutputSnapshot"]


@dataclass(frozen=True)
class OutputSnapshot:
    """The tail to show, how it was truncated, and where the full output is (if spilled)."""

    content: str
    truncation: TruncationResult
    full_output_path: str | None


class OutputBuffer:
    """Accumulates output chunks; see the module docstring.

    :param temp_file_prefix: file name prefix of the spill file, e.g. ``knightcode-bash``
    :param spill_head_bytes: the spill file keeps this much of the output's start …
    :param spill_tail_bytes: … and this much of its end
    """

    def __init__(
        self,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        temp_file_prefix: str = "knightcode-output",
        *,
        spill_head_bytes: int = SPILL_HEAD_BYTES,
        spill_tail_bytes: int = SPILL_TAIL_BYTES,
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._rolling = max(max_bytes * 2, 1)
        self._prefix = temp_file_prefix
        self._spill_caps = (spill_head_bytes, spill_tail_bytes)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._raw_chunks: list[bytes] = []
        self._tail = ""
        self._tail_bytes = 0
        self._tail_at_line_start = True
        self.total_raw_bytes = 0
        self.total_bytes = 0  # decoded, as UTF-8
        self.total_lines = 1
        self.last_line_bytes = 0
        self._finished = False
        self.temp_path: str | None = None
        self._temp: SpillFile | None = None  # open while output may still arrive
        self._spilled: SpillFile | None = None
        self.spill_error: str | None = None
        """Why the spill file is missing or incomplete (a full disk): the command goes on."""

    def append(self, data: bytes) -> None:
        """Add a chunk of raw output."""
        if self._finished:
            raise RuntimeError("cannot append to a finished output buffer")
        self.total_raw_bytes += len(data)
        self._add_text(self._decoder.decode(data))
        if self._temp is not None or self._over_limits():
            self._open_temp()
            self._spill(data)
        elif data:
            self._raw_chunks.append(data)

    def finish(self) -> None:
        """No more output: flush the decoder (a cut multi-byte character becomes U+FFFD)."""
        if self._finished:
            return
        self._finished = True
        self._add_text(self._decoder.decode(b"", final=True))
        if self._over_limits():
            self._open_temp()

    def snapshot(self, persist_if_truncated: bool = False) -> OutputSnapshot:
        """The current tail, tail-truncated, with totals for the whole output."""
        tail = truncate_tail(self._snapshot_text(), self.max_lines, self.max_bytes)
        truncated = self.total_lines > self.max_lines or self.total_bytes > self.max_bytes
        truncated_by = None
        if truncated:
            truncated_by = tail.truncated_by or (
                "bytes" if self.total_bytes > self.max_bytes else "lines"
            )
        truncation = replace(
            tail,
            truncated=truncated,
            truncated_by=truncated_by,
            total_lines=self.total_lines,
            total_bytes=self.total_bytes,
        )
        if persist_if_truncated and truncated:
            self._open_temp()
        return OutputSnapshot(truncation.content, truncation, self.temp_path)

    def close(self) -> None:
        """Complete and close the spill file (it stays on disk for the model to read, until
        knightcode exits).
        """
        if self._temp is not None:
            try:
                self._temp.close()
            except OSError as error:
                self._spill_failed(error)
            self._temp = None

    @property
    def spill_dropped(self) -> int:
        """Bytes of the output's middle that the spill file left out (see its cap)."""
        return self._spilled.dropped if self._spilled is not None else 0

    def _add_text(self, text: str) -> None:
        if not text:
            return
        size = utf8_len(text)
        self.total_bytes += size
        self._tail += text
        self._tail_bytes += size
        if self._tail_bytes > self._rolling * 2:
            self._trim_tail()
        newlines = text.count("\n")
        if newlines == 0:
            self.last_line_bytes += size
        else:
            self.total_lines += newlines
            self.last_line_bytes = utf8_len(text[text.rfind("\n") + 1 :])

    def _trim_tail(self) -> None:
        data = self._tail.encode("utf-8", "replace")
        if len(data) <= self._rolling:
            self._tail_bytes = len(data)
            return
        start = len(data) - self._rolling
        while start < len(data) and (data[start] & 0xC0) == 0x80:
            start += 1
        # Remember whether the kept tail starts a line, so a cut first line is not shown.
        self._tail_at_line_start = data[start - 1] == 0x0A
        self._tail = data[start:].decode("utf-8", "replace")
        self._tail_bytes = len(data) - start

    def _snapshot_text(self) -> str:
        if self._tail_at_line_start:
            return self._tail
        newline = self._tail.find("\n")
        return self._tail if newline == -1 else self._tail[newline + 1 :]

    def _over_limits(self) -> bool:
        return (
            self.total_raw_bytes > self.max_bytes
            or self.total_bytes > self.max_bytes
            or self.total_lines > self.max_lines
        )

    def _open_temp(self) -> None:
        if self.temp_path is not None or self.spill_error is not None:
            return
        chunks, self._raw_chunks = self._raw_chunks, []
        # The spill file is knightcode's own log on this machine, not a project file, so it is
        # written locally even when the command ran in a sandbox backend (as the reference does).
        try:
            self._temp = self._spilled = SpillFile(self._prefix, *self._spill_caps)
        except OSError as error:
            self._spill_failed(error)
            return
        self.temp_path = self._temp.path
        for chunk in chunks:
            self._spill(chunk)

    def _spill(self, data: bytes) -> None:
        if self._temp is not None:
            try:
                self._temp.write(data)
            except OSError as error:
                self._spill_failed(error)

    def _spill_failed(self, error: OSError) -> None:
        """Stop spilling: a full disk must not stop reading the command's output (an exception
        here would end the pipe reader, and the command would block on a full pipe).
        """
        self.spill_error = error.strerror or str(error)
        if self._temp is not None:
            temp, self._temp = self._temp, None
            with contextlib.suppress(OSError):
                temp.close()
