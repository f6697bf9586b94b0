"""Transcribed from the reference's test/session-manager/build-context.test.ts."""

from __future__ import annotations

from typing import Any

from knightcode._session import LAST_ENTRY, ModelRef, build_session_context

TS = "2025-01-01T00:00:00Z"


def msg(id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    base = {"type": "message", "id": id, "parentId": parent, "timestamp": TS}
    if role == "user":
        return {**base, "message": {"role": role, "content": text, "timestamp": 1}}
    return {
        **base,
        "message": {
            "role": role,
            "content": [{"type": "text", "text": text}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-test",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "stop",
            "timestamp": 1,
        },
    }


def compaction(id: str, parent: str | None, summary: str, first_kept: str) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": id,
        "parentId": parent,
        "timestamp": TS,
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": 1000,
    }


def branch_summary(id: str, parent: str | None, summary: str, from_id: str) -> dict[str, Any]:
    return {
        "type": "branch_summary",
        "id": id,
        "parentId": parent,
        "timestamp": TS,
        "summary": summary,
        "fromId": from_id,
    }


def thinking_level(id: str, parent: str | None, level: str) -> dict[str, Any]:
    return {
        "type": "thinking_level_change",
        "id": id,
        "parentId": parent,
        "timestamp": TS,
        "thinkingLevel": level,
    }


def model_change(id: str, parent: str | None, provider: str, model_id: str) -> dict[str, Any]:
    return {
        "type": "model_change",
        "id": id,
        "parentId": parent,
        "timestamp": TS,
        "provider": provider,
        "modelId": model_id,
    }


def build(entries: list[dict[str, Any]], leaf: Any = LAST_ENTRY) -> Any:
    return build_session_context(entries, leaf)  # type: ignore[arg-type]


# --- trivial cases ---


def test_empty_entries_returns_empty_context() -> None:
    ctx = build([])
    assert ctx.messages == []
    assert ctx.thinking_level == "off"
    assert ctx.model is None


def test_single_user_message() -> None:
    ctx = build([msg("1", None, "user", "hello")])
    assert len(ctx.messages) == 1
    assert ctx.messages[0]["role"] == "user"


def test_simple_conversation() -> None:
    entries = [
        msg("1", None, "user", "hello"),
        msg("2", "1", "assistant", "hi there"),
        msg("3", "2", "user", "how are you"),
        msg("4", "3", "assistant", "great"),
    ]
    ctx = build(entries)
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "user", "assistant"]


def test_tracks_thinking_level_changes() -> None:
    entries = [
        msg("1", None, "user", "hello"),
        thinking_level("2", "1", "high"),
        msg("3", "2", "assistant", "thinking hard"),
    ]
    ctx = build(entries)
    assert ctx.thinking_level == "high"
    assert len(ctx.messages) == 2


def test_tracks_model_from_assistant_message() -> None:
    ctx = build([msg("1", None, "user", "hello"), msg("2", "1", "assistant", "hi")])
    assert ctx.model == ModelRef("anthropic", "claude-test")


def test_tracks_model_from_model_change_entry() -> None:
    entries = [
        msg("1", None, "user", "hello"),
        model_change("2", "1", "openai", "gpt-4"),
        msg("3", "2", "assistant", "hi"),
    ]
    # The assistant message after the model change overrides it.
    assert build(entries).model == ModelRef("anthropic", "claude-test")
    assert build(entries[:2]).model == ModelRef("openai", "gpt-4")


# --- with compaction ---


def test_includes_summary_before_kept_messages() -> None:
    entries = [
        msg("1", None, "user", "first"),
        msg("2", "1", "assistant", "response1"),
        msg("3", "2", "user", "second"),
        msg("4", "3", "assistant", "response2"),
        compaction("5", "4", "Summary of first two turns", "3"),
        msg("6", "5", "user", "third"),
        msg("7", "6", "assistant", "response3"),
    ]
    ctx = build(entries)
    assert len(ctx.messages) == 5
    assert "Summary of first two turns" in ctx.messages[0]["summary"]
    assert ctx.messages[1]["content"] == "second"
    assert ctx.messages[2]["content"][0]["text"] == "response2"
    assert ctx.messages[3]["content"] == "third"
    assert ctx.messages[4]["content"][0]["text"] == "response3"
    assert [e["id"] for e in ctx.entries] == ["5", "3", "4", "6", "7"]


def test_handles_compaction_keeping_from_first_message() -> None:
    entries = [
        msg("1", None, "user", "first"),
        msg("2", "1", "assistant", "response"),
        compaction("3", "2", "Empty summary", "1"),
        msg("4", "3", "user", "second"),
    ]
    ctx = build(entries)
    assert len(ctx.messages) == 4
    assert "Empty summary" in ctx.messages[0]["summary"]


def test_multiple_compactions_uses_latest() -> None:
    entries = [
        msg("1", None, "user", "a"),
        msg("2", "1", "assistant", "b"),
        compaction("3", "2", "First summary", "1"),
        msg("4", "3", "user", "c"),
        msg("5", "4", "assistant", "d"),
        compaction("6", "5", "Second summary", "4"),
        msg("7", "6", "user", "e"),
    ]
    ctx = build(entries)
    assert len(ctx.messages) == 4
    assert "Second summary" in ctx.messages[0]["summary"]


def test_compaction_with_unknown_first_kept_keeps_nothing_before_it() -> None:
    entries = [
        msg("1", None, "user", "a"),
        compaction("2", "1", "S", "missing"),
        msg("3", "2", "user", "b"),
    ]
    ctx = build(entries)
    assert [m["role"] for m in ctx.messages] == ["compactionSummary", "user"]


# --- with branches ---


def test_follows_path_to_specified_leaf() -> None:
    entries = [
        msg("1", None, "user", "start"),
        msg("2", "1", "assistant", "response"),
        msg("3", "2", "user", "branch A"),
        msg("4", "2", "user", "branch B"),
    ]
    ctx_a = build(entries, "3")
    assert len(ctx_a.messages) == 3
    assert ctx_a.messages[2]["content"] == "branch A"
    ctx_b = build(entries, "4")
    assert len(ctx_b.messages) == 3
    assert ctx_b.messages[2]["content"] == "branch B"


def test_includes_branch_summary_in_path() -> None:
    entries = [
        msg("1", None, "user", "start"),
        msg("2", "1", "assistant", "response"),
        msg("3", "2", "user", "abandoned path"),
        branch_summary("4", "2", "Summary of abandoned work", "3"),
        msg("5", "4", "user", "new direction"),
    ]
    ctx = build(entries, "5")
    assert len(ctx.messages) == 4
    assert "Summary of abandoned work" in ctx.messages[2]["summary"]
    assert ctx.messages[3]["content"] == "new direction"


def test_empty_branch_summary_is_not_a_message() -> None:
    entries = [msg("1", None, "user", "start"), branch_summary("2", "1", "", "1")]
    assert len(build(entries).messages) == 1


def test_complex_tree_with_multiple_branches_and_compaction() -> None:
    entries = [
        msg("1", None, "user", "start"),
        msg("2", "1", "assistant", "r1"),
        msg("3", "2", "user", "q2"),
        msg("4", "3", "assistant", "r2"),
        compaction("5", "4", "Compacted history", "3"),
        msg("6", "5", "user", "q3"),
        msg("7", "6", "assistant", "r3"),
        msg("8", "3", "user", "wrong path"),
        msg("9", "8", "assistant", "wrong response"),
        branch_summary("10", "3", "Tried wrong approach", "9"),
        msg("11", "10", "user", "better approach"),
    ]
    main = build(entries, "7")
    assert len(main.messages) == 5
    assert "Compacted history" in main.messages[0]["summary"]
    assert main.messages[1]["content"] == "q2"
    assert main.messages[2]["content"][0]["text"] == "r2"
    assert main.messages[3]["content"] == "q3"
    assert main.messages[4]["content"][0]["text"] == "r3"

    branch = build(entries, "11")
    assert len(branch.messages) == 5
    assert branch.messages[0]["content"] == "start"
    assert branch.messages[1]["content"][0]["text"] == "r1"
    assert branch.messages[2]["content"] == "q2"
    assert "Tried wrong approach" in branch.messages[3]["summary"]
    assert branch.messages[4]["content"] == "better approach"


# --- edge cases ---


def test_uses_last_entry_when_leaf_id_not_found() -> None:
    entries = [msg("1", None, "user", "hello"), msg("2", "1", "assistant", "hi")]
    assert len(build(entries, "nonexistent").messages) == 2


def test_explicit_none_leaf_means_no_messages() -> None:
    entries = [msg("1", None, "user", "hello"), thinking_level("2", "1", "high")]
    ctx = build(entries, None)
    assert ctx.messages == [] and ctx.thinking_level == "off" and ctx.model is None


def test_handles_orphaned_entries_gracefully() -> None:
    entries = [msg("1", None, "user", "hello"), msg("2", "missing", "assistant", "orphan")]
    assert len(build(entries, "2").messages) == 1


def test_terminates_on_two_node_parent_cycles() -> None:
    entries = [msg("a", "b", "user", "from-a"), msg("b", "a", "assistant", "from-b")]
    ctx = build(entries, "b")
    assert [m["role"] for m in ctx.messages] == ["user", "assistant"]


def test_terminates_on_longer_parent_cycles() -> None:
    entries = [
        msg("a", "c", "user", "cycle-a"),
        msg("b", "a", "assistant", "cycle-b"),
        msg("c", "b", "user", "cycle-c"),
    ]
    ctx = build(entries, "c")
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "user"]


def test_custom_message_entry_becomes_custom_message_with_epoch_timestamp() -> None:
    entries = [
        msg("1", None, "user", "hi"),
        {
            "type": "custom_message",
            "customType": "note",
            "content": "injected",
            "display": False,
            "id": "2",
            "parentId": "1",
            "timestamp": "2025-01-01T00:00:01.500Z",
        },
        {
            "type": "custom",
            "customType": "state",
            "data": {"x": 1},
            "id": "3",
            "parentId": "2",
            "timestamp": TS,
        },
        {
            "type": "label",
            "id": "4",
            "parentId": "3",
            "timestamp": TS,
            "targetId": "1",
            "label": "L",
        },
    ]
    ctx = build(entries)
    assert ctx.messages[1] == {
        "role": "custom",
        "customType": "note",
        "content": "injected",
        "display": False,
        "timestamp": 1735689601500,
    }
    assert len(ctx.messages) == 2  # custom and label entries are not context
