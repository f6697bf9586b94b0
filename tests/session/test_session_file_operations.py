"""Transcribed from the reference's test/session-manager/file-operations.test.ts; where the
reference truncates a file without a valid header, knightcode first keeps it aside."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from knightcode._session import SessionManager, find_most_recent_session, load_entries_from_file

from .helpers import assistant_msg, header, read_records, write_jsonl

SESSION = '{"type":"session","id":"abc","timestamp":"2025-01-01T00:00:00Z","cwd":"/tmp"}\n'
MESSAGE = (
    '{"type":"message","id":"1","parentId":null,"timestamp":"2025-01-01T00:00:01Z",'
    '"message":{"role":"user","content":"hi","timestamp":1}}\n'
)

# --- loadEntriesFromFile ---


def test_returns_empty_list_for_non_existent_file(tmp_path: Path) -> None:
    assert load_entries_from_file(tmp_path / "nonexistent.jsonl") == []


def test_returns_empty_list_for_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    assert load_entries_from_file(tmp_path / "empty.jsonl") == []


def test_returns_empty_list_for_file_without_valid_session_header(tmp_path: Path) -> None:
    (tmp_path / "no-header.jsonl").write_text('{"type":"message","id":"1"}\n')
    assert load_entries_from_file(tmp_path / "no-header.jsonl") == []


def test_returns_empty_list_for_malformed_json(tmp_path: Path) -> None:
    (tmp_path / "malformed.jsonl").write_text("not json\n")
    assert load_entries_from_file(tmp_path / "malformed.jsonl") == []


def test_loads_valid_session_file(tmp_path: Path) -> None:
    (tmp_path / "valid.jsonl").write_text(SESSION + MESSAGE)
    entries = load_entries_from_file(tmp_path / "valid.jsonl")
    assert [e["type"] for e in entries] == ["session", "message"]


def test_skips_malformed_lines_but_keeps_valid_ones(tmp_path: Path) -> None:
    (tmp_path / "mixed.jsonl").write_text(SESSION + "not valid json\n" + MESSAGE)
    assert len(load_entries_from_file(tmp_path / "mixed.jsonl")) == 2


# --- findMostRecentSession ---


def test_find_most_recent_returns_none_for_empty_directory(tmp_path: Path) -> None:
    assert find_most_recent_session(tmp_path) is None


def test_find_most_recent_returns_none_for_non_existent_directory(tmp_path: Path) -> None:
    assert find_most_recent_session(tmp_path / "nonexistent") is None


def test_find_most_recent_ignores_non_jsonl_files(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("hello")
    (tmp_path / "file.json").write_text("{}")
    assert find_most_recent_session(tmp_path) is None


def test_find_most_recent_ignores_jsonl_files_without_valid_header(tmp_path: Path) -> None:
    (tmp_path / "invalid.jsonl").write_text('{"type":"message"}\n')
    assert find_most_recent_session(tmp_path) is None


def test_find_most_recent_returns_single_valid_session_file(tmp_path: Path) -> None:
    (tmp_path / "session.jsonl").write_text(SESSION)
    assert find_most_recent_session(tmp_path) == tmp_path / "session.jsonl"


def test_find_most_recent_returns_most_recently_modified(tmp_path: Path) -> None:
    older, newer = tmp_path / "older.jsonl", tmp_path / "newer.jsonl"
    newer.write_text(SESSION.replace("abc", "new"))
    older.write_text(SESSION.replace("abc", "old"))
    now = time.time()
    os.utime(older, (now - 100, now - 100))  # written last, but modified earlier
    assert find_most_recent_session(tmp_path) == newer


def test_find_most_recent_skips_invalid_files_and_returns_valid_one(tmp_path: Path) -> None:
    (tmp_path / "invalid.jsonl").write_text('{"type":"not-session"}\n')
    (tmp_path / "valid.jsonl").write_text(SESSION)
    now = time.time()
    os.utime(tmp_path / "valid.jsonl", (now - 100, now - 100))
    assert find_most_recent_session(tmp_path) == tmp_path / "valid.jsonl"


def test_find_most_recent_accepts_a_header_longer_than_512_bytes(tmp_path: Path) -> None:
    long_header = {**header("long"), "cwd": "/" + "d" * 600}
    write_jsonl(tmp_path / "long.jsonl", long_header)
    assert find_most_recent_session(tmp_path) == tmp_path / "long.jsonl"


def test_continue_recent_opens_the_most_recent_or_creates(tmp_path: Path) -> None:
    fresh = SessionManager.continue_recent(tmp_path, tmp_path)
    assert fresh.get_entries() == [] and fresh.session_file is not None
    write_jsonl(tmp_path / "s.jsonl", header("existing"), json.loads(MESSAGE))
    resumed = SessionManager.continue_recent(tmp_path, tmp_path)
    assert resumed.session_id == "existing" and resumed.session_file == tmp_path / "s.jsonl"


# --- opening corrupted files ---


def _single_header(path: Path, session_id: str) -> None:
    records = read_records(path)
    assert len(records) == 1
    assert records[0]["type"] == "session" and records[0]["id"] == session_id


def test_rewrites_empty_file_with_valid_header(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    sm = SessionManager.open(empty, tmp_path)
    assert sm.session_id and sm.header["type"] == "session"
    _single_header(empty, sm.session_id)
    assert sm.load_report.corrupt_copy is None  # nothing to keep
    assert not list(tmp_path.glob("empty.jsonl.*"))


def test_file_without_valid_header_is_kept_aside_then_rewritten(tmp_path: Path) -> None:
    no_header = tmp_path / "no-header.jsonl"
    original = (
        '{"type":"message","id":"abc","parentId":"orphaned","timestamp":"2025-01-01T00:00:00Z",'
        '"message":{"role":"assistant","content":"test"}}\n'
    )
    no_header.write_text(original)
    sm = SessionManager.open(no_header, tmp_path)
    assert sm.header["type"] == "session"
    _single_header(no_header, sm.session_id)
    kept = tmp_path / "no-header.jsonl.corrupt-1"
    assert sm.load_report.corrupt_copy == kept and sm.load_report.invalid_header
    assert kept.read_text() == original  # never destroy user data


def test_corrupt_copies_are_numbered(tmp_path: Path) -> None:
    file = tmp_path / "s.jsonl"
    for expected in (1, 2, 3):
        damaged = f'garbage {expected}\n{{"type":"message","id":"e{expected}"}}\n'
        file.write_text(damaged)
        SessionManager.open(file, tmp_path)
        assert (tmp_path / f"s.jsonl.corrupt-{expected}").read_text() == damaged


def test_preserves_explicit_session_file_path_when_recovering(tmp_path: Path) -> None:
    explicit = tmp_path / "my-session.jsonl"
    explicit.write_text("")
    assert SessionManager.open(explicit, tmp_path).session_file == explicit


def test_subsequent_loads_of_recovered_file_work(tmp_path: Path) -> None:
    corrupted = tmp_path / "corrupted.jsonl"
    corrupted.write_text('garbage content\n{"type":"label","id":"x1"}\n')
    first = SessionManager.open(corrupted, tmp_path)
    second = SessionManager.open(corrupted, tmp_path)
    assert second.session_id == first.session_id
    assert second.header["type"] == "session"


def test_opening_a_missing_file_creates_it_lazily_at_that_path(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "named.jsonl"
    sm = SessionManager.open(target)
    assert sm.session_file == target and not target.exists()
    sm.append_message(assistant_msg("hi"))
    assert read_records(target)[0]["id"] == sm.session_id


def test_deferred_pre_assistant_state_is_not_duplicated(tmp_path: Path) -> None:
    file = write_jsonl(
        tmp_path / "preassistant-prefix.jsonl",
        {**header("session-1", cwd=str(tmp_path)), "timestamp": "2026-02-24T21:10:41.329Z"},
        {
            "type": "model_change",
            "id": "root0001",
            "parentId": None,
            "timestamp": "2026-02-24T21:10:42.000Z",
            "provider": "openai-codex",
            "modelId": "gpt-5.3-codex",
        },
        {
            "type": "thinking_level_change",
            "id": "child0001",
            "parentId": "root0001",
            "timestamp": "2026-02-24T21:10:43.000Z",
            "thinkingLevel": "xhigh",
        },
    )
    session = SessionManager.open(file, tmp_path)
    session.append_custom("plan-mode", {"enabled": False})
    session.append_message(assistant_msg("ready"))
    records = read_records(file)
    assert [r["type"] for r in records].count("session") == 1
    ids = [r["id"] for r in records if r["type"] != "session"]
    assert len(ids) == len(set(ids)) == 4


def test_duplicate_entry_ids_collapse_in_the_tree(tmp_path: Path) -> None:
    def marker(entry_id: str, parent: str | None, second: int) -> dict[str, object]:
        return {
            "type": "custom",
            "customType": "marker",
            "id": entry_id,
            "parentId": parent,
            "timestamp": f"2026-02-24T21:10:4{second}.000Z",
        }

    file = write_jsonl(
        tmp_path / "duplicate-ids.jsonl",
        header("session-2"),
        marker("root0001", None, 2),
        marker("child0001", "root0001", 3),
        marker("root0001", None, 2),
        marker("child0001", "root0001", 3),
        marker("leaf0001", "child0001", 4),
    )
    tree = SessionManager.open(file, tmp_path).get_tree()
    assert len(tree) == 1 and tree[0].entry["id"] == "root0001"
    assert [c.entry["id"] for c in tree[0].children] == ["child0001"]
    assert [c.entry["id"] for c in tree[0].children[0].children] == ["leaf0001"]


def test_parent_cycles_become_roots_in_the_tree(tmp_path: Path) -> None:
    file = write_jsonl(
        tmp_path / "parent-cycle.jsonl",
        header("session-3"),
        {
            "type": "custom",
            "customType": "marker",
            "id": "cycle-a",
            "parentId": "cycle-b",
            "timestamp": "2026-02-24T21:10:42.000Z",
        },
        {
            "type": "custom",
            "customType": "marker",
            "id": "cycle-b",
            "parentId": "cycle-a",
            "timestamp": "2026-02-24T21:10:43.000Z",
        },
        {
            "type": "custom",
            "customType": "marker",
            "id": "tail",
            "parentId": "cycle-b",
            "timestamp": "2026-02-24T21:10:44.000Z",
        },
    )
    tree = SessionManager.open(file, tmp_path).get_tree()
    assert sorted(n.entry["id"] for n in tree) == ["cycle-a", "cycle-b"]
    by_id = {n.entry["id"]: n for n in tree}
    assert by_id["cycle-a"].children == []
    assert [c.entry["id"] for c in by_id["cycle-b"].children] == ["tail"]  # hangs off the cycle
