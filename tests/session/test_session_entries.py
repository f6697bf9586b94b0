"""Entry shapes as appended: the reference's field order, optionals omitted, refusals."""

from __future__ import annotations

import pytest

from knightcode._session import SessionManager

from .helpers import USAGE, user_msg

BASE = ["type", "id", "parentId", "timestamp"]


def keys(session: SessionManager, entry_id: str) -> list[str]:
    entry = session.get_entry(entry_id)
    assert entry is not None
    return list(entry)


def test_field_order_matches_the_reference() -> None:
    session = SessionManager.in_memory()
    first = session.append_message(user_msg("q"))
    assert keys(session, first) == [*BASE, "message"]
    full = session.append_compaction("s", first, 10, {"readFiles": []}, True, USAGE)  # type: ignore[arg-type]
    assert keys(session, full) == [
        *BASE,
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "usage",
        "details",
        "fromHook",
    ]
    bare = session.append_compaction("s", first, 10)
    assert keys(session, bare) == [*BASE, "summary", "firstKeptEntryId", "tokensBefore"]
    summary = session.append_branch_summary("s", first)
    assert keys(session, summary) == [*BASE, "fromId", "summary"]
    message = session.append_custom_message("kind", "text", False)
    assert keys(session, message) == [
        "type",
        "customType",
        "content",
        "display",
        "id",
        "parentId",
        "timestamp",
    ]
    detailed = session.append_custom_message("kind", "text", True, {"k": 1})
    assert keys(session, detailed)[4] == "details"
    assert keys(session, session.append_model_change("p", "m")) == [*BASE, "provider", "modelId"]
    assert keys(session, session.append_thinking_level_change("low")) == [*BASE, "thinkingLevel"]
    assert keys(session, session.append_session_info("n")) == [*BASE, "name"]
    assert keys(session, session.append_label(first, "L")) == [*BASE, "targetId", "label"]
    edit = session.append_context_edit([{"op": "omit", "targetId": first}], reason="why")
    assert keys(session, edit) == [*BASE, "edits", "reason"]


@pytest.mark.parametrize("role", ["compactionSummary", "branchSummary"])
def test_summary_roles_cannot_be_appended_as_messages(role: str) -> None:
    session = SessionManager.in_memory()
    with pytest.raises(ValueError, match="own entry type"):
        session.append_message({"role": role, "summary": "s", "timestamp": 0})  # type: ignore[arg-type,typeddict-item]
    assert session.get_entries() == []


def test_timestamps_are_millisecond_iso_utc() -> None:
    session = SessionManager.in_memory()
    entry = session.get_entry(session.append_message(user_msg("q")))
    assert entry is not None
    stamp = entry["timestamp"]
    assert len(stamp) == 24 and stamp.endswith("Z") and stamp[19] == "."
