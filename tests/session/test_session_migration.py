"""Transcribed from the reference's test/session-manager/migration.test.ts, plus migration of
files on disk (rewrite, firstKeptEntryIndex, hookMessage)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from knightcode._session import SessionManager, load_entries_from_file, migrate_session_entries

from .helpers import header, read_records, write_jsonl

ASSISTANT: dict[str, Any] = {
    "role": "assistant",
    "content": [{"type": "text", "text": "hello"}],
    "api": "test",
    "provider": "test",
    "model": "test",
    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0},
    "stopReason": "stop",
    "timestamp": 2,
}


def test_adds_id_and_parent_id_to_v1_entries() -> None:
    entries: list[Any] = [
        header(version=None),
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02Z",
            "message": copy.deepcopy(ASSISTANT),
        },
    ]
    assert migrate_session_entries(entries) is True
    assert entries[0]["version"] == 3
    msg1, msg2 = entries[1], entries[2]
    assert len(msg1["id"]) == 8 and msg1["parentId"] is None
    assert len(msg2["id"]) == 8 and msg2["parentId"] == msg1["id"]


def test_repairs_v2_sessions_with_trailing_entries_without_ids() -> None:
    entries: list[Any] = [
        header(version=2),
        {
            "type": "message",
            "id": "abc12345",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02Z",
            "message": copy.deepcopy(ASSISTANT),
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:03Z",
            "message": {"role": "user", "content": "later", "timestamp": 3},
        },
    ]
    migrate_session_entries(entries)
    msg1, msg2, msg3 = entries[1:]
    assert msg1["id"] == "abc12345" and msg1["parentId"] is None
    assert len(msg2["id"]) == 8 and msg2["parentId"] == msg1["id"]
    assert len(msg3["id"]) == 8 and msg3["parentId"] == msg2["id"]


def test_is_idempotent() -> None:
    entries: list[Any] = [
        header(version=2),
        {
            "type": "message",
            "id": "abc12345",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "def67890",
            "parentId": "abc12345",
            "timestamp": "2025-01-01T00:00:02Z",
            "message": copy.deepcopy(ASSISTANT),
        },
    ]
    migrate_session_entries(entries)
    assert [e.get("id") for e in entries[1:]] == ["abc12345", "def67890"]
    assert entries[2]["parentId"] == "abc12345"
    snapshot = copy.deepcopy(entries)
    assert migrate_session_entries(entries) is False
    assert entries == snapshot


def test_v1_compaction_index_counts_the_header(tmp_path: Path) -> None:
    # Index 2 of the file's entry list (header = 0) is the second message.
    file = write_jsonl(
        tmp_path / "v1.jsonl",
        {
            **header(version=None),
            "provider": "anthropic",
            "modelId": "claude",
            "thinkingLevel": "off",
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": "one", "timestamp": 1},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02Z",
            "message": copy.deepcopy(ASSISTANT),
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:03Z",
            "message": {
                "role": "hookMessage",
                "customType": "x",
                "content": "c",
                "display": True,
                "timestamp": 3,
            },
        },
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:04Z",
            "summary": "S",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 10,
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:05Z",
            "message": {"role": "user", "content": "after", "timestamp": 5},
        },
    )
    session = SessionManager.open(file)
    assert session.load_report.migrated_from == 1 and session.load_report.rewritten
    entries = session.get_entries()
    compaction = entries[3]
    assert compaction["firstKeptEntryId"] == entries[1]["id"]  # type: ignore[typeddict-item]
    assert "firstKeptEntryIndex" not in compaction
    assert entries[2]["message"]["role"] == "custom"  # type: ignore[typeddict-item]
    roles = [m["role"] for m in session.build_context().messages]
    assert roles == ["compactionSummary", "assistant", "custom", "user"]
    # The file was rewritten as version 3 and loads again without migration.
    records = read_records(file)
    assert records[0]["version"] == 3 and records[0]["provider"] == "anthropic"
    assert [r.get("id") for r in records[1:]] == [e["id"] for e in entries]
    again = SessionManager.open(file)
    assert again.load_report.migrated_from is None and not again.load_report.rewritten
    assert [e["id"] for e in again.get_entries()] == [e["id"] for e in entries]


def test_v1_compaction_index_pointing_at_header_keeps_nothing(tmp_path: Path) -> None:
    file = write_jsonl(
        tmp_path / "v1.jsonl",
        header(version=None),
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": "one", "timestamp": 1},
        },
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:04Z",
            "summary": "S",
            "firstKeptEntryIndex": 0,
            "tokensBefore": 10,
        },
    )
    entries = load_entries_from_file(file)
    assert "firstKeptEntryId" not in entries[2] and "firstKeptEntryIndex" not in entries[2]


def test_v2_file_renames_hook_message_and_is_rewritten(tmp_path: Path) -> None:
    file = write_jsonl(
        tmp_path / "v2.jsonl",
        header(version=2),
        {
            "type": "message",
            "id": "aaaa0001",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {
                "role": "hookMessage",
                "customType": "x",
                "content": "c",
                "display": True,
                "timestamp": 1,
            },
        },
    )
    session = SessionManager.open(file)
    assert session.load_report.migrated_from == 2
    records = read_records(file)
    assert records[0]["version"] == 3
    assert records[1]["message"]["role"] == "custom" and records[1]["id"] == "aaaa0001"


def test_migration_keeps_the_original_aside_when_lines_were_skipped(tmp_path: Path) -> None:
    file = write_jsonl(
        tmp_path / "v2.jsonl",
        header(version=2),
        "this line is garbage",
        {
            "type": "message",
            "id": "aaaa0001",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
    )
    original = file.read_bytes()
    session = SessionManager.open(file)
    assert session.load_report.corrupt_copy == tmp_path / "v2.jsonl.corrupt-1"
    assert (tmp_path / "v2.jsonl.corrupt-1").read_bytes() == original
    assert b"garbage" not in file.read_bytes()
