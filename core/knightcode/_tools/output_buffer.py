"""``OutputBuffer``: bounded memory for a command's streaming output, spilling to a temp file.

Only a decoded tail (at most a few times the byte limit) is kept in memory for the model's view;
once the output outgrows the limits the raw bytes go to ``<tmp>/<prefix>-<16 hex>.log`` so the
model can be pointed at the full text.
"""

from __future__ import annotations

import codecs
import os
import secrets
import tempfile
from dataclasses import dataclass, replace
from typing import BinaryIO

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
    """

    def __init__(
        self,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        temp_file_prefix: str = "knightcode-output",
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._rolling = max(max_bytes * 2, 1)
        self._prefix = temp_file_prefix
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
        self._temp: BinaryIO | None = None

    def append(self, data: bytes) -> None:
        """Add a chunk of raw output."""
        if self._finished:
            raise RuntimeError("cannot append to a finished output buffer")
        self.total_raw_bytes += len(data)
        self._add_text(self._decoder.decode(data))
        if self._temp is not None or self._over_limits():
            self._open_temp()
            assert self._temp is not None
            self._temp.write(data)
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
        """Close the spill file (it stays on disk for the model to read)."""
        if self._temp is not None:
            self._temp.close()
            self._temp = None

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
        if self.temp_path is not None:
            return
        # The spill file is knightcode's own log on this machine, not a project file, so it is
        # written locally even when the command ran in a sandbox backend (as the reference does).
        self.temp_path = os.path.join(
            tempfile.gettempdir(), f"{self._prefix}-{secrets.token_hex(8)}.log"
        )
        self._temp = open(self.temp_path, "wb")  # noqa: SIM115 - kept open across chunks
        for chunk in self._raw_chunks:
            self._temp.write(chunk)
        self._raw_chunks = []
