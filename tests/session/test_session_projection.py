"""context_edit entries and the session projection."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._session import EntryNotFoundError, SessionManager, project_path
from knightcode._session.loading import read_session_file

from .helpers import assistant_msg, user_msg

BIG_USAGE = {"input": 9000, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 9010}
SMALL_USAGE = {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110}


def overflowed_session() -> tuple[SessionManager, dict[str, str]]:
    session = SessionManager.in_memory()
    ids = {
        "u1": session.append_message(user_msg("question")),
        "a1": session.append_message(assistant_msg("answer", usage=SMALL_USAGE)),
        "u2": session.append_message(user_msg("huge paste")),
        "a2": session.append_message(assistant_msg("failed attempt", usage=BIG_USAGE)),
    }
    return session, ids


def test_omit_hides_entries_from_context_but_keeps_them_stored() -> None:
    session, ids = overflowed_session()
    edit_id = session.append_context_edit(
        [{"op": "omit", "targetId": ids["u2"]}, {"op": "omit", "targetId": ids["a2"]}],
        reason="overflow",
    )
    context = session.build_context()
    assert [e["id"] for e in context.entries] == [ids["u1"], ids["a1"]]
    # Raw history is untouched: the branch, the entries and the tree still hold everything.
    assert [e["id"] for e in session.get_branch()] == [*ids.values(), edit_id]
    assert len(session.get_entries()) == 5
    # Estimates read the projection: the omitted attempt's usage no longer counts.
    assert session.estimate_context_tokens().tokens == 110


def test_replace_substitutes_the_message_the_model_sees() -> None:
    session, ids = overflowed_session()
    short = user_msg("short summary of the paste")
    session.append_context_edit([{"op": "replace", "targetId": ids["u2"], "message": short}])
    context = session.build_context()
    assert context.messages[2] == short
    assert context.entries[2]["id"] == ids["u2"] and context.entries[2]["type"] == "message"
    assert session.get_entry(ids["u2"])["message"]["content"] == "huge paste"  # type: ignore[index,typeddict-item]


def test_later_edit_of_the_same_target_wins() -> None:
    session, ids = overflowed_session()
    session.append_context_edit([{"op": "omit", "targetId": ids["u2"]}])
    session.append_context_edit(
        [{"op": "replace", "targetId": ids["u2"], "message": user_msg("back, shorter")}]
    )
    assert [m.get("content") for m in session.build_context().messages][2] == "back, shorter"


def test_edits_apply_only_on_their_own_branch() -> None:
    session, ids = overflowed_session()
    session.append_context_edit([{"op": "omit", "targetId": ids["u1"]}])
    session.branch(ids["a2"])  # a sibling branch that never saw the edit
    session.append_message(user_msg("other branch"))
    contents = [m.get("content") for m in session.build_context().messages]
    assert contents[0] == "question"


def test_edits_do_not_reach_entries_after_them() -> None:
    session, ids = overflowed_session()
    raw = session.get_branch()
    # Hand-written edit that names an entry appended later: ignored by the projection.
    edit = {
        "type": "context_edit",
        "id": "e1",
        "parentId": ids["a1"],
        "timestamp": "2025-01-01T00:00:00Z",
        "edits": [{"op": "omit", "targetId": ids["u2"]}],
    }
    path = [raw[0], raw[1], edit, {**raw[2], "parentId": "e1"}, raw[3]]
    projection = project_path(path)  # type: ignore[arg-type]
    assert projection.omitted == frozenset()


def test_projection_reports_omitted_and_replaced() -> None:
    session, ids = overflowed_session()
    replacement = user_msg("r")
    session.append_context_edit(
        [
            {"op": "omit", "targetId": ids["a2"]},
            {"op": "replace", "targetId": ids["u2"], "message": replacement},
        ]
    )
    projection = session.projection()
    assert projection.omitted == {ids["a2"]}
    assert projection.replaced == {ids["u2"]: replacement}
    assert [e["id"] for e in projection.entries][:3] == [ids["u1"], ids["a1"], ids["u2"]]
    assert len(projection.path) == 5 and len(projection.entries) == 4  # the edit entry stays


def test_edits_apply_around_a_compaction() -> None:
    session, ids = overflowed_session()
    session.append_compaction("summary", ids["a1"], 5000)
    session.append_context_edit([{"op": "omit", "targetId": ids["a1"]}])  # the first kept entry
    roles = [m["role"] for m in session.build_context().messages]
    assert roles == ["compactionSummary", "user", "assistant"]  # kept from a1 on, a1 hidden


def test_invalid_edits_are_refused_when_appending() -> None:
    session, ids = overflowed_session()
    compaction = session.append_compaction("s", ids["u1"], 1)
    label = session.append_label(ids["u1"], "L")
    with pytest.raises(EntryNotFoundError):
        session.append_context_edit([{"op": "omit", "targetId": "nope"}])
    with pytest.raises(ValueError, match="compaction"):
        session.append_context_edit([{"op": "omit", "targetId": compaction}])
    with pytest.raises(ValueError, match="no message to replace"):
        session.append_context_edit(
            [{"op": "replace", "targetId": label, "message": user_msg("x")}]
        )
    with pytest.raises(ValueError, match="invalid context edit"):
        session.append_context_edit([{"op": "hide", "targetId": ids["u1"]}])  # type: ignore[list-item]
    session.branch(ids["a1"])
    with pytest.raises(EntryNotFoundError):  # not on the current branch
        session.append_context_edit([{"op": "omit", "targetId": ids["u2"]}])


def test_malformed_edits_in_a_file_are_ignored(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path)
    u1 = session.append_message(user_msg("q"))
    session.append_message(assistant_msg("a"))
    session.close()
    assert session.session_file is not None
    with session.session_file.open("a") as handle:
        leaf = session.leaf_id
        handle.write(
            f'{{"type":"context_edit","id":"e1","parentId":"{leaf}",'
            '"timestamp":"2025-01-01T00:00:00.000Z","edits":[{"op":"omit"},'
            f'{{"op":"replace","targetId":"{u1}"}},"junk",{{"op":"omit","targetId":"{u1}"}}]}}\n'
        )
    reopened = SessionManager.open(session.session_file)
    assert [m["role"] for m in reopened.build_context().messages] == ["assistant"]


def test_context_edit_entry_on_disk(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path)
    session.append_message(user_msg("q"))
    a1 = session.append_message(assistant_msg("a"))
    edit_id = session.append_context_edit([{"op": "omit", "targetId": a1}])
    assert session.session_file is not None
    entry = read_session_file(session.session_file).entries[-1]
    assert list(entry) == ["type", "id", "parentId", "timestamp", "edits"]  # no "reason": null
    assert entry["id"] == edit_id and entry["edits"] == [{"op": "omit", "targetId": a1}]  # type: ignore[typeddict-item]
