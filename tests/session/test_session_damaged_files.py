"""Damaged session files in the store itself: unknown versions, over-deep lines, entries with
damaged fields, files that are not sessions, writes that fail. (The same cases through the
executable are in ``tests/agent/test_session_damage.py``.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knightcode._session.context import build_session_context
from knightcode._session.errors import SessionPathError
from knightcode._session.loading import migrate_session_entries, read_session_file
from knightcode._session.manager import SessionManager
from knightcode._session.notices import SessionNotice
from knightcode._session.tokens import calculate_context_tokens
from knightcode._session.validation import entry_problem, message_problem

HEADER = '{"type":"session","version":%s,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z"}\n'
ENTRY = '{"type":"message","id":"e1","parentId":null,"timestamp":"t","message":%s}\n'
USER = '{"role":"user","content":"hi","timestamp":1}'


@pytest.mark.parametrize("version", ['"3"', "99", "null", "0", "true", "2.0"])
def test_a_header_of_unknown_version_is_invalid_and_never_migrated(
    tmp_path: Path, version: str
) -> None:
    file = tmp_path / "s.jsonl"
    file.write_text(HEADER % version + ENTRY % USER)
    loaded = read_session_file(file)
    assert loaded.header is None and loaded.report.invalid_header
    assert "unknown version" in (loaded.report.header_problem or "")
    assert not loaded.report.not_a_session
    entries: Any = [json.loads(line) for line in file.read_text().splitlines()]
    assert migrate_session_entries(entries) is False


def test_a_header_without_version_is_still_version_1(tmp_path: Path) -> None:
    file = tmp_path / "s.jsonl"
    file.write_text(
        '{"type":"session","id":"s1"}\n' + '{"type":"message","message":' + USER + "}\n"
    )
    loaded = read_session_file(file)
    assert loaded.header is not None and loaded.report.migrated_from == 1


def test_the_unknown_version_file_is_kept_aside_with_a_notice(tmp_path: Path) -> None:
    file = tmp_path / "s.jsonl"
    original = HEADER % '"3"' + ENTRY % USER
    file.write_text(original)
    notices: list[SessionNotice] = []
    manager = SessionManager.open(file)
    manager.set_notice_listener(notices.append)
    assert (tmp_path / "s.jsonl.corrupt-1").read_text() == original
    (notice,) = notices
    assert notice.problem == "invalid_header" and notice.moved_to == tmp_path / "s.jsonl.corrupt-1"
    assert notice.record()["type"] == "session_repaired"
    assert manager.get_entries() == []


def test_an_over_deep_line_is_one_skipped_line(tmp_path: Path) -> None:
    file = tmp_path / "s.jsonl"
    deep = '{"type":"custom","id":"d","data":' + "[" * 5000 + "]" * 5000 + "}\n"
    file.write_text(HEADER % 3 + deep + ENTRY % USER)
    loaded = read_session_file(file)
    assert loaded.report.skipped_lines == 1
    assert [entry["id"] for entry in loaded.entries] == ["e1"]


@pytest.mark.parametrize("text", ["# notes\n", "\x00\x01binary", '{"type":"module"}\n', "[1, 2]\n"])
def test_a_file_that_is_not_a_session_is_refused_untouched(tmp_path: Path, text: str) -> None:
    file = tmp_path / "NOTES.md"
    file.write_text(text)
    with pytest.raises(SessionPathError, match="not a session file"):
        SessionManager.open(file)
    assert file.read_text() == text
    assert not list(tmp_path.glob("NOTES.md?*"))  # no copy, no temporary file


def test_a_directory_or_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SessionPathError, match="is a directory"):
        SessionManager.open(tmp_path)
    with pytest.raises(SessionPathError, match="not a regular file"):
        SessionManager.open("/dev/null")


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"type": "compaction", "summary": 7}, "compaction 'summary' is not a string"),
        ({"type": "compaction", "summary": "s", "tokensBefore": "x"}, "'tokensBefore'"),
        ({"type": "custom_message", "content": 5}, "custom_message 'content' is not a string"),
        ({"type": "branch_summary", "summary": ["x"]}, "branch_summary 'summary'"),
        ({"type": "model_change", "provider": 1}, "model_change 'provider'"),
        ({"type": "thinking_level_change", "thinkingLevel": 2}, "'thinkingLevel'"),
        ({"type": "message", "message": 5}, "'message' is not an object"),
        ({"type": "message", "message": {"role": 5}}, "'message.role' is not a string"),
    ],
)
def test_entry_problems_are_named(entry: dict[str, Any], problem: str) -> None:
    assert problem in (entry_problem(entry) or "")


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": [{"type": "image", "data": "AA", "mimeType": "image/png"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": ""}]},
        {"role": "assistant", "content": [{"type": "future", "x": 1}]},
        {"role": "bashExecution", "command": "ls", "output": "a"},
        {"role": "somethingNew"},
    ],
)
def test_well_formed_messages_pass(message: dict[str, Any]) -> None:
    assert message_problem(message) is None


def test_the_context_leaves_damaged_entries_out_and_says_which() -> None:
    def entry(entry_id: str, parent: str | None, **fields: Any) -> Any:
        return {"id": entry_id, "parentId": parent, "timestamp": "t", **fields}

    entries = [
        entry("a", None, type="message", message={"role": "user", "content": "one"}),
        entry("b", "a", type="message", message={"role": "assistant", "content": 5}),
        entry("c", "b", type="compaction", summary=7, firstKeptEntryId="a"),
        entry("d", "c", type="message", message={"role": "user", "content": "two"}),
    ]
    context = build_session_context(entries)
    assert [m["content"] for m in context.messages] == ["one", "two"]  # type: ignore[typeddict-item]
    assert [(s.entry_id, s.problem) for s in context.skipped] == [
        ("b", "assistant 'content' is not a list"),
        ("c", "compaction 'summary' is not a string"),
    ]


def test_usage_counts_that_are_not_numbers_count_as_zero() -> None:
    usage: Any = {"input": "many", "output": 3, "cacheRead": None, "cacheWrite": 1.5}
    assert calculate_context_tokens(usage) == 4


def test_a_header_nested_too_deeply_is_not_a_session_for_listing(tmp_path: Path) -> None:
    """The session pickers and ``-c`` ask every file whether it is a session: a first line
    nested past the decoder's limit is "no", not a RecursionError."""
    from knightcode._session.listing import is_valid_session_file

    path = tmp_path / "deep.jsonl"
    path.write_text('{"type":"session","x":' + "[" * 5000 + "]" * 5000 + "}\n")
    assert is_valid_session_file(path) is False
