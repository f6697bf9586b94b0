"""truncate_head / truncate_tail / format_size, as the reference's truncate.ts behaves."""

from __future__ import annotations

from knightcode._tools.truncate import format_size, truncate_head, truncate_line, truncate_tail


def test_format_size_units() -> None:
    assert format_size(0) == "0B"
    assert format_size(1023) == "1023B"
    assert format_size(1024) == "1.0KB"
    assert format_size(51200) == "50.0KB"
    assert format_size(1536 * 1024) == "1.5MB"


def test_head_keeps_everything_within_limits() -> None:
    result = truncate_head("a\nb\nc")
    assert (result.content, result.truncated, result.truncated_by) == ("a\nb\nc", False, None)
    assert result.total_lines == 3 and result.output_bytes == 5


def test_head_line_limit() -> None:
    text = "\n".join(f"line {i}" for i in range(10))
    result = truncate_head(text, max_lines=3)
    assert result.content == "line 0\nline 1\nline 2"
    assert result.truncated_by == "lines"
    assert (result.total_lines, result.output_lines) == (10, 3)


def test_head_byte_limit_keeps_whole_lines_only() -> None:
    result = truncate_head("aaaa\nbbbb\ncccc", max_bytes=10)
    assert result.content == "aaaa\nbbbb"
    assert result.truncated_by == "bytes"
    assert result.output_bytes == 9


def test_head_first_line_over_limit_gives_nothing() -> None:
    result = truncate_head("x" * 20 + "\nshort", max_bytes=10)
    assert result.content == ""
    assert result.first_line_exceeds_limit
    assert result.truncated_by == "bytes"


def test_head_counts_utf8_bytes() -> None:
    result = truncate_head("é\n" * 10, max_bytes=9)  # each "é\n" is 3 bytes
    assert result.content == "é\né\né"
    assert result.output_bytes == 8


def test_tail_keeps_last_lines() -> None:
    text = "\n".join(str(i) for i in range(10))
    result = truncate_tail(text, max_lines=3)
    assert result.content == "7\n8\n9"
    assert result.truncated_by == "lines"


def test_tail_byte_limit() -> None:
    result = truncate_tail("aaaa\nbbbb\ncccc", max_bytes=10)
    assert result.content == "bbbb\ncccc"
    assert result.truncated_by == "bytes"
    assert not result.last_line_partial


def test_tail_partial_last_line_respects_utf8_boundaries() -> None:
    result = truncate_tail("start\n" + "é" * 10, max_bytes=5)
    assert result.last_line_partial
    assert result.content == "éé"  # 5 bytes cut to a character boundary: 4 bytes
    assert result.output_bytes == 4


def test_details_use_reference_keys() -> None:
    details = truncate_head("a\nb\nc", max_lines=1).to_details()
    assert details["truncatedBy"] == "lines"
    assert details["totalLines"] == 3 and details["outputLines"] == 1
    assert set(details) >= {"firstLineExceedsLimit", "lastLinePartial", "maxLines", "maxBytes"}


def test_truncate_line() -> None:
    assert truncate_line("abc", 5) == ("abc", False)
    assert truncate_line("abcdefgh", 5) == ("abcde... [truncated]", True)
