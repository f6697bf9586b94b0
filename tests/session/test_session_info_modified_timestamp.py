"""Transcribed from the reference's test/session-info-modified-timestamp.test.ts, plus the other
fields of a session listing."""

from __future__ import annotations

import os
import time
from pathlib import Path

from knightcode._session import SessionManager, list_all_sessions, list_sessions

from .helpers import assistant_msg, header, write_jsonl


def test_modified_uses_last_message_timestamp_instead_of_file_mtime(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "modified.jsonl",
        {**header("test-session"), "timestamp": "1970-01-01T00:00:00.000Z"},
    )
    manager = SessionManager.open(path)
    manager.append_message(assistant_msg("hi", timestamp=int(time.time() * 1000)))
    manager.close()
    before = path.stat().st_mtime

    manager = SessionManager.open(path)
    msg_time = int(time.time() * 1000) + 12_345
    manager.append_message(assistant_msg("later", timestamp=msg_time))
    manager.close()

    info = next(s for s in list_sessions(tmp_path) if s.path == path)
    assert int(info.modified.timestamp() * 1000) == msg_time
    assert info.modified.timestamp() != before


def test_listing_title_name_count_and_order(tmp_path: Path) -> None:
    older = write_jsonl(
        tmp_path / "a.jsonl",
        header("older"),
        {
            "type": "message",
            "id": "1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "prompt"}],
                "timestamp": 1000,
            },
        },
        {
            "type": "session_info",
            "id": "2",
            "parentId": "1",
            "timestamp": "2025-01-01T00:00:02Z",
            "name": "  Named  ",
        },
        {
            "type": "session_info",
            "id": "3",
            "parentId": "2",
            "timestamp": "2025-01-01T00:00:03Z",
            "name": "",
        },
    )
    newer = write_jsonl(
        tmp_path / "b.jsonl",
        {**header("newer"), "parentSession": str(older)},
        {
            "type": "message",
            "id": "1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01Z",
            "message": assistant_msg("answer", timestamp=5000),
        },
    )
    (tmp_path / "junk.jsonl").write_text("not a session\n")
    (tmp_path / "notes.txt").write_text("ignored")
    infos = list_sessions(tmp_path)
    assert [i.id for i in infos] == ["newer", "older"]
    new_info, old_info = infos
    assert old_info.first_message == "first prompt"
    assert old_info.name == "Named"  # the latest non-empty name, trimmed
    assert old_info.message_count == 1
    assert new_info.first_message == "(no messages)"
    assert new_info.all_messages_text == "answer"
    assert new_info.parent_session_path == str(older)
    assert new_info.cwd == "/tmp"
    assert newer == new_info.path


def test_modified_falls_back_to_header_timestamp(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "h.jsonl", {**header("h"), "timestamp": "2025-03-04T05:06:07.089Z"}
    )
    os.utime(path, (0, 0))
    info = list_sessions(tmp_path)[0]
    assert info.modified.isoformat() == "2025-03-04T05:06:07.089000+00:00"
    assert info.created == info.modified


def test_list_all_sessions_spans_project_directories(tmp_path: Path) -> None:
    for name, session_id in (("--a--", "x"), ("--b--", "y")):
        (tmp_path / name).mkdir()
        write_jsonl(tmp_path / name / f"{session_id}.jsonl", header(session_id))
    assert sorted(i.id for i in list_all_sessions(tmp_path)) == ["x", "y"]
    assert list_all_sessions(tmp_path / "missing") == []


def test_session_name_is_latest_non_empty_session_info() -> None:
    session = SessionManager.in_memory()
    assert session.session_name is None
    session.append_session_info("  first  ")
    assert session.session_name == "first"
    session.append_session_info("second")
    session.append_session_info("   ")
    assert session.session_name == "second"
    assert session.get_entries()[-1]["name"] == ""  # type: ignore[typeddict-item]
