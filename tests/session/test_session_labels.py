"""Transcribed from the reference's test/session-manager/labels.test.ts."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._session import EntryNotFoundError, SessionManager

from .helpers import assistant_msg, read_records, user_msg


def test_sets_and_gets_labels() -> None:
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    assert session.get_label(msg_id) is None
    label_id = session.append_label(msg_id, "checkpoint")
    assert session.get_label(msg_id) == "checkpoint"
    entry = next(e for e in session.get_entries() if e["type"] == "label")
    assert (entry["id"], entry["targetId"], entry["label"]) == (label_id, msg_id, "checkpoint")  # type: ignore[typeddict-item]


def test_clears_labels_with_none() -> None:
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    session.append_label(msg_id, "checkpoint")
    clear_id = session.append_label(msg_id, None)
    assert session.get_label(msg_id) is None
    # A clear omits the field rather than writing null, like JSON.stringify drops undefined.
    assert "label" not in session.get_entry(clear_id)  # type: ignore[operator]


def test_empty_label_clears_too() -> None:
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    session.append_label(msg_id, "x")
    clear_id = session.append_label(msg_id, "")
    assert session.get_label(msg_id) is None
    assert session.get_entry(clear_id)["label"] == ""  # type: ignore[index,typeddict-item]


def test_last_label_wins() -> None:
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    session.append_label(msg_id, "first")
    session.append_label(msg_id, "second")
    last_id = session.append_label(msg_id, "third")
    assert session.get_label(msg_id) == "third"
    node = next(n for n in session.get_tree() if n.entry["id"] == msg_id)
    assert node.label == "third"
    assert node.label_timestamp == session.get_entry(last_id)["timestamp"]  # type: ignore[index]


def test_labels_are_included_in_tree_nodes() -> None:
    session = SessionManager.in_memory()
    msg1 = session.append_message(user_msg("hello"))
    msg2 = session.append_message(assistant_msg("hi"))
    label1 = session.append_label(msg1, "start")
    label2 = session.append_label(msg2, "response")
    node1 = next(n for n in session.get_tree() if n.entry["id"] == msg1)
    node2 = next(n for n in node1.children if n.entry["id"] == msg2)
    assert (node1.label, node1.label_timestamp) == ("start", session.get_entry(label1)["timestamp"])  # type: ignore[index]
    assert (node2.label, node2.label_timestamp) == (
        "response",
        session.get_entry(label2)["timestamp"],
    )  # type: ignore[index]


def test_labels_are_preserved_in_create_branched_session() -> None:
    session = SessionManager.in_memory()
    msg1 = session.append_message(user_msg("hello"))
    msg2 = session.append_message(assistant_msg("hi"))
    label1 = session.append_label(msg1, "important")
    label2 = session.append_label(msg2, "also-important")
    stamp1 = session.get_entry(label1)["timestamp"]  # type: ignore[index]
    stamp2 = session.get_entry(label2)["timestamp"]  # type: ignore[index]
    session.create_branched_session(msg2)
    assert session.get_label(msg1) == "important"
    assert session.get_label(msg2) == "also-important"
    labels = [e for e in session.get_entries() if e["type"] == "label"]
    assert len(labels) == 2
    assert (
        labels[0]["parentId"] == msg2 and labels[1]["parentId"] == labels[0]["id"]
    )  # chained after the path
    node1 = session.get_tree()[0]
    node2 = next(n for n in node1.children if n.entry["id"] == msg2)
    assert node1.label_timestamp == stamp1 and node2.label_timestamp == stamp2


def test_labels_not_on_path_are_not_preserved_in_create_branched_session() -> None:
    session = SessionManager.in_memory()
    msg1 = session.append_message(user_msg("hello"))
    msg2 = session.append_message(assistant_msg("hi"))
    msg3 = session.append_message(user_msg("followup"))
    session.append_label(msg1, "first")
    session.append_label(msg2, "second")
    session.append_label(msg3, "third")
    session.create_branched_session(msg2)
    assert session.get_label(msg1) == "first"
    assert session.get_label(msg2) == "second"
    assert session.get_label(msg3) is None


def test_labels_survive_a_fork_to_a_file(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path)
    msg1 = session.append_message(user_msg("hello"))
    msg2 = session.append_message(assistant_msg("hi"))
    session.append_label(msg1, "keep")
    new_file = session.create_branched_session(msg2)
    assert new_file is not None
    records = read_records(new_file)
    assert [r.get("label") for r in records if r["type"] == "label"] == ["keep"]
    assert SessionManager.open(new_file).get_label(msg1) == "keep"


def test_labels_are_not_included_in_build_context() -> None:
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    session.append_label(msg_id, "checkpoint")
    messages = session.build_context().messages
    assert [m["role"] for m in messages] == ["user"]


def test_throws_when_labeling_non_existent_entry() -> None:
    session = SessionManager.in_memory()
    with pytest.raises(EntryNotFoundError, match="Entry non-existent not found"):
        session.append_label("non-existent", "label")


def test_labels_are_replayed_when_loading(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path)
    msg1 = session.append_message(user_msg("hello"))
    msg2 = session.append_message(assistant_msg("hi"))
    session.append_label(msg1, "a")
    session.append_label(msg2, "b")
    session.append_label(msg1, None)
    session.close()
    assert session.session_file is not None
    reopened = SessionManager.open(session.session_file)
    assert reopened.get_label(msg1) is None
    assert reopened.get_label(msg2) == "b"
