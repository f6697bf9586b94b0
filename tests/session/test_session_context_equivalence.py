"""build_session_context (one fused walk from the leaf) against the plain algorithm of its
docstring, on random trees with every entry type, damaged entries and parent cycles.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from knightcode._session import build_session_context
from knightcode._session.context import ModelRef, SessionContext
from knightcode._session.messages import (
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)
from knightcode._session.projection import apply_edit, collect_edits
from knightcode._session.tree import path_to_root

TS = "2025-01-01T00:00:00.000Z"


def plain_context(entries: list[Any], leaf_id: str) -> SessionContext:
    """The module docstring, step by step: walk, scan forward, emit."""
    by_id = {entry["id"]: entry for entry in entries}
    path = path_to_root(by_id, leaf_id)
    thinking, model, compaction, at, has_edits = "off", None, None, -1, False
    for index, entry in enumerate(path):
        if entry["type"] == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                model = ModelRef(str(message.get("provider", "")), str(message.get("model", "")))
        elif entry["type"] == "thinking_level_change":
            thinking = entry.get("thinkingLevel", thinking)
        elif entry["type"] == "model_change":
            model = ModelRef(entry.get("provider", ""), entry.get("modelId", ""))
        elif entry["type"] == "compaction":
            compaction, at = entry, index
        elif entry["type"] == "context_edit":
            has_edits = True
    context = SessionContext(thinking_level=thinking, model=model)
    edits = collect_edits(path) if has_edits else {}

    def emit(part: list[Any]) -> None:
        for entry in part:
            edit = edits.get(entry["id"])
            if edit is not None:
                projected = apply_edit(entry, edit)
                if projected is not None and projected["type"] == "message":
                    context.messages.append(projected["message"])
                    context.entries.append(projected)
                continue
            if entry["type"] == "message" and isinstance(entry.get("message"), dict):
                context.messages.append(entry["message"])
                context.entries.append(entry)
            elif entry["type"] == "custom_message":
                context.messages.append(
                    create_custom_message(
                        entry.get("customType", ""),
                        entry.get("content", ""),
                        entry.get("display", False),
                        entry.get("details"),
                        entry.get("timestamp", ""),
                    )
                )
                context.entries.append(entry)
            elif entry["type"] == "branch_summary" and entry.get("summary"):
                context.messages.append(
                    create_branch_summary_message(
                        entry["summary"], entry.get("fromId", ""), entry.get("timestamp", "")
                    )
                )
                context.entries.append(entry)

    if compaction is None:
        emit(path)
        return context
    context.messages.append(
        create_compaction_summary_message(
            compaction.get("summary", ""), compaction.get("tokensBefore", 0), TS
        )
    )
    context.entries.append(compaction)
    start = next((i for i in range(at) if path[i]["id"] == compaction.get("firstKeptEntryId")), at)
    emit(path[start:at])
    emit(path[at + 1 :])
    return context


def random_session(rng: random.Random, size: int) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for index in range(size):
        entry_id = f"e{index}"
        roll = rng.random()
        if not entries or roll < 0.02:
            parent = None
        elif roll < 0.15:
            parent = rng.choice(entries)["id"]  # a branch
        elif roll < 0.17:
            parent = "missing"  # an orphan
        else:
            parent = entries[-1]["id"]
        entry: dict[str, Any] = {"id": entry_id, "parentId": parent, "timestamp": TS}
        kind = rng.choices(
            [
                "user",
                "assistant",
                "damaged",
                "thinking",
                "thinking_without_level",
                "model",
                "compaction",
                "custom_message",
                "branch_summary",
                "empty_summary",
                "label",
                "context_edit",
            ],
            [30, 30, 1, 3, 1, 3, 2, 2, 2, 1, 2, 2],
        )[0]
        if kind in ("user", "assistant", "damaged"):
            entry["type"] = "message"
            if kind == "user":
                entry["message"] = {"role": "user", "content": f"u{index}", "timestamp": 1}
            elif kind == "assistant":
                entry["message"] = {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"a{index}"}],
                    "provider": rng.choice(["p1", "p2"]),
                    "model": rng.choice(["m1", "m2"]),
                    "timestamp": 1,
                }
        elif kind.startswith("thinking"):
            entry["type"] = "thinking_level_change"
            if kind == "thinking":
                entry["thinkingLevel"] = rng.choice(["low", "high"])
        elif kind == "model":
            entry.update(type="model_change", provider="p3", modelId=f"m{index}")
        elif kind == "compaction":
            kept = rng.choice(entries)["id"] if entries else entry_id
            entry.update(type="compaction", summary="s", firstKeptEntryId=kept, tokensBefore=9)
        elif kind == "custom_message":
            entry.update(type="custom_message", customType="c", content="x", display=True)
        elif kind in ("branch_summary", "empty_summary"):
            summary = "b" if kind == "branch_summary" else ""
            entry.update(type="branch_summary", fromId="f", summary=summary)
        elif kind == "label":
            entry.update(type="label", targetId=entries[-1]["id"] if entries else entry_id)
        else:
            targets = [e for e in entries[-20:] if e["type"] == "message"]
            edits = [{"op": "omit", "targetId": t["id"]} for t in targets[:1]]
            entry.update(type="context_edit", edits=edits)
        entries.append(entry)
    return entries


@pytest.mark.parametrize("seed", range(40))
def test_fused_walk_equals_the_plain_algorithm(seed: int) -> None:
    rng = random.Random(seed)
    entries = random_session(rng, rng.choice([1, 5, 60, 400]))
    if seed % 5 == 0 and len(entries) > 3:
        entries[1]["parentId"] = entries[-1]["id"]  # a parent cycle through the last entry
    for leaf in [entries[-1], *rng.sample(entries, min(5, len(entries)))]:
        expected = plain_context(entries, leaf["id"])
        actual = build_session_context(entries, leaf["id"])
        assert actual.messages == expected.messages
        assert [e["id"] for e in actual.entries] == [e["id"] for e in expected.entries]
        assert (actual.thinking_level, actual.model) == (
            expected.thinking_level,
            expected.model,
        )
