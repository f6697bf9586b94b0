"""Transcribed from the reference's test/session-manager/custom-session-id.test.ts."""

from __future__ import annotations

import re
import time
from pathlib import Path

from knightcode._session import SessionManager

from .helpers import assistant_msg, header, user_msg, write_jsonl

UUID_V7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_uses_the_provided_id_instead_of_generating_one() -> None:
    session = SessionManager.in_memory()
    session.new_session(id="my-custom-id")
    assert session.session_id == "my-custom-id"


def test_generates_a_uuid7_when_no_id_is_provided() -> None:
    session = SessionManager.in_memory()
    session.new_session()
    assert UUID_V7.match(session.session_id)


def test_generates_a_uuid7_when_options_have_no_id() -> None:
    session = SessionManager.in_memory()
    session.new_session(parent_session="parent.jsonl")
    assert UUID_V7.match(session.session_id)
    assert session.header["parentSession"] == "parent.jsonl"


def test_includes_the_custom_id_in_the_session_header() -> None:
    session = SessionManager.in_memory()
    session.new_session(id="header-test-id")
    assert session.header["id"] == "header-test-id"


def test_generates_a_uuid7_when_constructed_without_an_explicit_id() -> None:
    session = SessionManager.in_memory()
    assert UUID_V7.match(session.session_id)
    assert session.header["id"] == session.session_id


def test_uuid7_ids_sort_by_creation_time() -> None:
    first = SessionManager.in_memory().session_id
    time.sleep(0.002)
    second = SessionManager.in_memory().session_id
    assert first < second


def test_generates_a_uuid7_when_creating_a_branched_session() -> None:
    session = SessionManager.in_memory()
    first = session.append_message(
        {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 1}
    )
    session.create_branched_session(first)
    assert UUID_V7.match(session.session_id)
    assert session.header["id"] == session.session_id


def test_generates_a_uuid7_when_forking_from_another_session_file(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "source.jsonl",
        header("legacy-session-id", cwd=str(tmp_path)),
        {
            "type": "message",
            "id": "entry-1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": assistant_msg("hello"),
        },
    )
    forked = SessionManager.fork_from(source, tmp_path, tmp_path)
    assert UUID_V7.match(forked.header["id"])
    assert forked.header["parentSession"] == str(source)
    assert [e["id"] for e in forked.get_entries()] == ["entry-1"]
    assert forked.session_file is not None and forked.session_file.exists()


def test_new_session_file_name_uses_timestamp_and_id(tmp_path: Path) -> None:
    session = SessionManager.create("/work/proj", tmp_path)
    assert session.session_file is not None
    stamp = session.header["timestamp"].replace(":", "-").replace(".", "-")
    assert session.session_file.name == f"{stamp}_{session.session_id}.jsonl"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", session.header["timestamp"])
    session.append_message(user_msg("hi"))
    assert not session.session_file.exists()
