"""Transcribed from the reference's test/session-manager/tree-traversal.test.ts (plus the
deferred-write cases of createBranchedSession)."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._session import EntryNotFoundError, SessionManager

from .helpers import assistant_msg, header, read_records, user_msg, write_jsonl

# --- append operations ---


def test_append_message_creates_entry_with_correct_parent_chain() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("first"))
    id2 = session.append_message(assistant_msg("second"))
    id3 = session.append_message(user_msg("third"))
    entries = session.get_entries()
    assert [(e["id"], e["parentId"], e["type"]) for e in entries] == [
        (id1, None, "message"),
        (id2, id1, "message"),
        (id3, id2, "message"),
    ]
    assert all(len(e["id"]) == 8 and int(e["id"], 16) >= 0 for e in entries)


def test_append_thinking_level_change_integrates_into_tree() -> None:
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    thinking_id = session.append_thinking_level_change("high")
    session.append_message(assistant_msg("response"))
    entries = session.get_entries()
    thinking = next(e for e in entries if e["type"] == "thinking_level_change")
    assert thinking["id"] == thinking_id and thinking["parentId"] == msg_id
    assert thinking["thinkingLevel"] == "high"
    assert entries[2]["parentId"] == thinking_id


def test_append_model_change_integrates_into_tree() -> None:
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    model_id = session.append_model_change("openai", "gpt-4")
    session.append_message(assistant_msg("response"))
    entries = session.get_entries()
    model = next(e for e in entries if e["type"] == "model_change")
    assert (model["id"], model["parentId"], model["provider"], model["modelId"]) == (
        model_id,
        msg_id,
        "openai",
        "gpt-4",
    )
    assert entries[2]["parentId"] == model_id


def test_append_compaction_integrates_into_tree() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    compaction_id = session.append_compaction("summary", id1, 1000)
    session.append_message(user_msg("3"))
    entries = session.get_entries()
    comp = next(e for e in entries if e["type"] == "compaction")
    assert comp["id"] == compaction_id and comp["parentId"] == id2
    assert (comp["summary"], comp["firstKeptEntryId"], comp["tokensBefore"]) == (
        "summary",
        id1,
        1000,
    )
    assert "details" not in comp and "fromHook" not in comp and "usage" not in comp
    assert entries[3]["parentId"] == compaction_id


def test_append_custom_entry_integrates_into_tree() -> None:
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    custom_id = session.append_custom("my_data", {"key": "value"})
    session.append_message(assistant_msg("response"))
    entries = session.get_entries()
    custom = next(e for e in entries if e["type"] == "custom")
    assert (custom["id"], custom["parentId"], custom["customType"], custom["data"]) == (
        custom_id,
        msg_id,
        "my_data",
        {"key": "value"},
    )
    assert entries[2]["parentId"] == custom_id


def test_leaf_pointer_advances_after_each_append() -> None:
    session = SessionManager.in_memory()
    assert session.leaf_id is None
    id1 = session.append_message(user_msg("1"))
    assert session.leaf_id == id1
    id2 = session.append_message(assistant_msg("2"))
    assert session.leaf_id == id2
    id3 = session.append_thinking_level_change("high")
    assert session.leaf_id == id3


# --- getBranch ---


def test_get_branch_returns_empty_list_for_empty_session() -> None:
    assert SessionManager.in_memory().get_branch() == []


def test_get_branch_returns_single_entry_path() -> None:
    session = SessionManager.in_memory()
    entry_id = session.append_message(user_msg("hello"))
    assert [e["id"] for e in session.get_branch()] == [entry_id]


def test_get_branch_returns_full_path_from_root_to_leaf() -> None:
    session = SessionManager.in_memory()
    ids = [
        session.append_message(user_msg("1")),
        session.append_message(assistant_msg("2")),
        session.append_thinking_level_change("high"),
        session.append_message(user_msg("3")),
    ]
    assert [e["id"] for e in session.get_branch()] == ids


def test_get_branch_returns_path_from_specified_entry_to_root() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    session.append_message(user_msg("3"))
    session.append_message(assistant_msg("4"))
    assert [e["id"] for e in session.get_branch(id2)] == [id1, id2]


def test_get_branch_terminates_on_malformed_parent_cycles(tmp_path: Path) -> None:
    file = write_jsonl(
        tmp_path / "cycle-branch.jsonl",
        header("session-cycle"),
        {
            "type": "custom",
            "customType": "marker",
            "id": "cycle-a",
            "parentId": "cycle-b",
            "timestamp": "2026-02-27T11:00:01.000Z",
        },
        {
            "type": "custom",
            "customType": "marker",
            "id": "cycle-b",
            "parentId": "cycle-a",
            "timestamp": "2026-02-27T11:00:02.000Z",
        },
    )
    session = SessionManager.open(file, tmp_path)
    assert [e["id"] for e in session.get_branch("cycle-b")] == ["cycle-a", "cycle-b"]


# --- getTree ---


def test_get_tree_returns_empty_list_for_empty_session() -> None:
    assert SessionManager.in_memory().get_tree() == []


def test_get_tree_returns_single_root_for_linear_session() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))
    tree = session.get_tree()
    assert len(tree) == 1
    root = tree[0]
    assert root.entry["id"] == id1
    assert [c.entry["id"] for c in root.children] == [id2]
    assert [c.entry["id"] for c in root.children[0].children] == [id3]
    assert root.children[0].children[0].children == []


def test_get_tree_returns_branches_after_branch() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))
    session.branch(id2)
    id4 = session.append_message(user_msg("4-branch"))
    tree = session.get_tree()
    assert len(tree) == 1 and tree[0].entry["id"] == id1
    node2 = tree[0].children[0]
    assert node2.entry["id"] == id2
    assert sorted(c.entry["id"] for c in node2.children) == sorted([id3, id4])


def test_get_tree_handles_multiple_branches_at_same_point() -> None:
    session = SessionManager.in_memory()
    session.append_message(user_msg("root"))
    id2 = session.append_message(assistant_msg("response"))
    branch_ids = []
    for name in ("A", "B", "C"):
        session.branch(id2)
        branch_ids.append(session.append_message(user_msg(f"branch-{name}")))
    node2 = session.get_tree()[0].children[0]
    assert node2.entry["id"] == id2
    assert sorted(c.entry["id"] for c in node2.children) == sorted(branch_ids)


def test_get_tree_handles_deep_branching() -> None:
    session = SessionManager.in_memory()
    session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))
    session.append_message(assistant_msg("4"))
    session.branch(id2)
    id5 = session.append_message(user_msg("5"))
    session.append_message(assistant_msg("6"))
    session.branch(id5)
    session.append_message(user_msg("7"))
    node2 = session.get_tree()[0].children[0]
    assert len(node2.children) == 2
    node5 = next(c for c in node2.children if c.entry["id"] == id5)
    assert len(node5.children) == 2
    node3 = next(c for c in node2.children if c.entry["id"] == id3)
    assert len(node3.children) == 1


def test_get_tree_orders_children_by_timestamp_not_file_order(tmp_path: Path) -> None:
    file = write_jsonl(
        tmp_path / "order.jsonl",
        header(),
        {
            "type": "custom",
            "customType": "m",
            "id": "root",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:00.000Z",
        },
        {
            "type": "custom",
            "customType": "m",
            "id": "late",
            "parentId": "root",
            "timestamp": "2025-01-01T00:00:09.000Z",
        },
        {
            "type": "custom",
            "customType": "m",
            "id": "early",
            "parentId": "root",
            "timestamp": "2025-01-01T00:00:01Z",
        },
    )
    tree = SessionManager.open(file).get_tree()
    assert [c.entry["id"] for c in tree[0].children] == ["early", "late"]


# --- branch ---


def test_branch_moves_leaf_pointer_to_specified_entry() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))
    assert session.leaf_id == id3
    session.branch(id1)
    assert session.leaf_id == id1


def test_branch_throws_for_non_existent_entry() -> None:
    session = SessionManager.in_memory()
    session.append_message(user_msg("hello"))
    with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
        session.branch("nonexistent")


def test_new_appends_become_children_of_branch_point() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    session.append_message(assistant_msg("2"))
    session.branch(id1)
    id3 = session.append_message(user_msg("branched"))
    assert session.get_entry(id3)["parentId"] == id1  # type: ignore[index]


def test_reset_leaf_makes_next_append_a_new_root() -> None:
    session = SessionManager.in_memory()
    session.append_message(user_msg("1"))
    session.reset_leaf()
    assert session.leaf_id is None
    assert session.build_context().messages == []
    new_root = session.append_message(user_msg("again"))
    assert session.get_entry(new_root)["parentId"] is None  # type: ignore[index]
    assert len(session.get_tree()) == 2


# --- branchWithSummary ---


def test_branch_with_summary_inserts_summary_and_advances_leaf() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    session.append_message(assistant_msg("2"))
    session.append_message(user_msg("3"))
    summary_id = session.branch_with_summary(id1, "Summary of abandoned work")
    assert session.leaf_id == summary_id
    summary = next(e for e in session.get_entries() if e["type"] == "branch_summary")
    assert summary["parentId"] == id1
    assert summary["summary"] == "Summary of abandoned work"
    assert summary["fromId"] == id1


def test_branch_with_summary_from_none_is_a_root_from_root() -> None:
    session = SessionManager.in_memory()
    session.append_message(user_msg("1"))
    summary_id = session.branch_with_summary(None, "S", details={"readFiles": []}, from_hook=True)
    entry = session.get_entry(summary_id)
    assert entry is not None
    assert (entry["parentId"], entry["fromId"], entry["details"], entry["fromHook"]) == (  # type: ignore[typeddict-item]
        None,
        "root",
        {"readFiles": []},
        True,
    )


def test_branch_with_summary_throws_for_non_existent_entry() -> None:
    session = SessionManager.in_memory()
    session.append_message(user_msg("hello"))
    with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
        session.branch_with_summary("nonexistent", "summary")


# --- getLeafEntry / getEntry ---


def test_get_leaf_entry() -> None:
    session = SessionManager.in_memory()
    assert session.get_leaf_entry() is None
    session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    assert session.get_leaf_entry()["id"] == id2  # type: ignore[index]


def test_get_entry() -> None:
    session = SessionManager.in_memory()
    assert session.get_entry("nonexistent") is None
    id1 = session.append_message(user_msg("first"))
    id2 = session.append_message(assistant_msg("second"))
    assert session.get_entry(id1)["message"]["content"] == "first"  # type: ignore[index,typeddict-item]
    assert session.get_entry(id2)["message"]["content"][0]["text"] == "second"  # type: ignore[index,typeddict-item]


def test_build_context_returns_messages_from_current_branch_only() -> None:
    session = SessionManager.in_memory()
    session.append_message(user_msg("msg1"))
    id2 = session.append_message(assistant_msg("msg2"))
    session.append_message(user_msg("msg3"))
    session.branch(id2)
    session.append_message(assistant_msg("msg4-branch"))
    messages = session.build_context().messages
    assert messages[0]["content"] == "msg1"
    assert messages[1]["content"][0]["text"] == "msg2"  # type: ignore[index]
    assert messages[2]["content"][0]["text"] == "msg4-branch"  # type: ignore[index]
    assert len(messages) == 3


# --- createBranchedSession ---


def test_create_branched_session_throws_for_non_existent_entry() -> None:
    session = SessionManager.in_memory()
    session.append_message(user_msg("hello"))
    with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
        session.create_branched_session("nonexistent")


def test_create_branched_session_in_memory_keeps_path_to_leaf() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))
    session.append_message(assistant_msg("4"))
    session.branch(id3)
    session.append_message(user_msg("5"))
    old_id = session.session_id
    assert session.create_branched_session(id2) is None
    assert [e["id"] for e in session.get_entries()] == [id1, id2]
    assert session.session_id != old_id
    assert "parentSession" not in session.header


def test_create_branched_session_extracts_correct_path_from_branched_tree() -> None:
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    session.append_message(user_msg("3"))
    session.branch(id2)
    id4 = session.append_message(user_msg("4"))
    id5 = session.append_message(assistant_msg("5"))
    session.create_branched_session(id5)
    assert [e["id"] for e in session.get_entries()] == [id1, id2, id4, id5]


def test_create_branched_session_without_assistant_defers_the_file(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path)
    id1 = session.append_message(user_msg("first question"))
    session.append_message(assistant_msg("first answer"))
    session.append_message(user_msg("second question"))
    session.append_message(assistant_msg("second answer"))
    old_file = session.session_file
    new_file = session.create_branched_session(id1)
    assert new_file is not None and new_file != old_file
    assert not new_file.exists()  # no assistant on the path yet
    session.append_custom("preset-state", {"name": "plan"})
    session.append_message(assistant_msg("new answer"))
    records = read_records(new_file)
    assert [r["type"] for r in records].count("session") == 1
    ids = [r["id"] for r in records if r["type"] != "session"]
    assert len(ids) == len(set(ids)) == 3
    assert records[0]["parentSession"] == str(old_file)


def test_create_branched_session_with_assistant_writes_immediately(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path)
    session.append_message(user_msg("first question"))
    id2 = session.append_message(assistant_msg("first answer"))
    session.append_message(user_msg("second question"))
    session.append_message(assistant_msg("second answer"))
    new_file = session.create_branched_session(id2)
    assert new_file is not None and new_file.exists()
    records = read_records(new_file)
    assert [r["type"] for r in records] == ["session", "message", "message"]
    session.append_message(user_msg("next"))  # appends go to the new file
    assert len(read_records(new_file)) == 4
