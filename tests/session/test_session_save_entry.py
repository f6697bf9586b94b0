"""Transcribed from the reference's test/session-manager/save-entry.test.ts."""

from __future__ import annotations

from knightcode._session import SessionManager

from .helpers import assistant_msg, user_msg


def test_saves_custom_entries_and_includes_them_in_tree_traversal() -> None:
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    custom_id = session.append_custom("my_data", {"foo": "bar"})
    msg2_id = session.append_message(assistant_msg("hi"))

    entries = session.get_entries()
    assert len(entries) == 3
    custom = next(e for e in entries if e["type"] == "custom")
    assert custom["customType"] == "my_data"
    assert custom["data"] == {"foo": "bar"}
    assert custom["id"] == custom_id and custom["parentId"] == msg_id

    assert [e["id"] for e in session.get_branch()] == [msg_id, custom_id, msg2_id]
    assert len(session.build_context().messages) == 2  # custom entries are not context


def test_custom_entry_without_data_omits_the_field() -> None:
    session = SessionManager.in_memory()
    custom_id = session.append_custom("flag")
    assert list(session.get_entry(custom_id)) == [
        "type",
        "customType",
        "id",
        "parentId",
        "timestamp",
    ]  # type: ignore[arg-type]
