r"""Output truncation shared by the tools: a line limit and a byte limit, whichever hits first.

Bytes are counted as UTF-8 and lines as pieces of ``text.split("\n")``, like the reference, so
the notices the model sees ("Showing lines 1-2000 of 2500") agree with what it would get there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypedDict

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "TruncationDetails",
    "TruncationResult",
    "format_size",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
    "utf8_len",
]

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500

TruncatedBy = Literal["lines", "bytes"] | None


class TruncationDetails(TypedDict):
    """The reference's ``details.truncation`` object of a tool result."""

    content: str
    truncated: bool
    truncatedBy: TruncatedBy
    totalLines: int
    totalBytes: int
    outputLines: int
    outputBytes: int
    lastLinePartial: bool
    firstLineExceedsLimit: bool
    maxLines: int
    maxBytes: int


@dataclass
class TruncationResult:
    """What :func:`truncate_head` / :func:`truncate_tail` kept and why."""

    content: str
    truncated: bool
    truncated_by: TruncatedBy
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_details(self) -> TruncationDetails:
        """The reference's ``details.truncation`` object (camelCase keys)."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def utf8_len(text: str) -> int:
    """Length of ``text`` in UTF-8 bytes (lone surrogates count as the 3 bytes of U+FFFD)."""
    return len(text.encode("utf-8", "replace"))


def format_size(size: int) -> str:
    """``512B``, ``50.0KB``, ``1.5MB`` — the reference's human-readable sizes."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def _untruncated(
    content: str, lines: int, size: int, max_lines: int, max_bytes: int
) -> TruncationResult:
    return TruncationResult(
        content, False, None, lines, size, lines, size, False, False, max_lines, max_bytes
    )


def truncate_head(
    content: str,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    total_lines: int | None = None,
    total_bytes: int | None = None,
) -> TruncationResult:
    """Keep whole leading lines within both limits (for file reads: show the beginning).

    When the first line alone is larger than ``max_bytes`` nothing is kept and
    ``first_line_exceeds_limit`` is set, so the caller can point at another way to read it.

    ``total_lines``/``total_bytes`` are the size of the whole text when ``content`` is only its
    start — enough of it to decide (see :mod:`~knightcode._tools.read_window`): a streamed file
    is never held whole.
    """
    lines = content.split("\n")
    if total_bytes is None:
        total_bytes = utf8_len(content)
    if total_lines is None:
        total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, total_lines, total_bytes, max_lines, max_bytes)
    if utf8_len(lines[0]) > max_bytes:
        return TruncationResult(
            "", True, "bytes", total_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes
        )
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    for index, line in enumerate(lines[:max_lines]):
        size = utf8_len(line) + (1 if index > 0 else 0)  # the newline joining it to the previous
        if used + size > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    output = "\n".join(kept)
    return TruncationResult(
        output,
        True,
        truncated_by,
        total_lines,
        total_bytes,
        len(kept),
        utf8_len(output),
        False,
        False,
        max_lines,
        max_bytes,
    )


def _tail_bytes(line: str, max_bytes: int) -> str:
    """The last ``max_bytes`` bytes of ``line``, starting on a UTF-8 character boundary."""
    data = line.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return line
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1  # skip continuation bytes so the kept text decodes cleanly
    return data[start:].decode("utf-8", "replace")


def truncate_tail(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole trailing lines within both limits (for command output: show the end).

    If the last line alone is too big, its tail is kept and ``last_line_partial`` is set.
    """
    total_bytes = utf8_len(content)
    lines = content.split("\n")
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, total_lines, total_bytes, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    last_line_partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            if not kept:
                partial = _tail_bytes(line, max_bytes)
                kept.append(partial)
                used = utf8_len(partial)
                last_line_partial = True
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    kept.reverse()
    output = "\n".join(kept)
    return TruncationResult(
        output,
        True,
        truncated_by,
        total_lines,
        total_bytes,
        len(kept),
        utf8_len(output),
        last_line_partial,
        False,
        max_lines,
        max_bytes,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut one grep line to ``max_chars`` characters; returns ``(text, was_truncated)``."""
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True
