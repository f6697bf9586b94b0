"""Build what the model sees from the current branch, exactly like the reference's
``buildSessionContext`` — plus knightcode's ``context_edit`` projection.

1. An explicit ``None`` leaf means "before the first entry": no messages. The default
   (:data:`LAST_ENTRY`), or an unknown id, means the last entry in file order.
2. Walk from the leaf to the root. Thinking level and model come from the raw path: the last
   ``thinking_level_change``, and the last ``model_change`` *or assistant message*.
3. With a ``compaction`` on the path (the last one wins): its summary first, then the path
   entries before it starting at ``firstKeptEntryId`` (none if that id is not on the path), then
   every entry after it. Without one: every path entry.
4. ``message`` entries give their message, ``custom_message`` entries a ``custom`` message,
   ``branch_summary`` entries with a non-empty summary a ``branchSummary`` message; other
   entries give nothing. ``context_edit`` omissions and replacements apply on the way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, Literal

from knightcode._session.messages import (
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)
from knightcode._session.projection import apply_edit, collect_edits
from knightcode._session.tree import path_to_root
from knightcode._types.entries import CompactionEntry, ContextEdit, SessionEntry
from knightcode._types.messages import AgentMessage

__all__ = ["LAST_ENTRY", "ModelRef", "SessionContext", "build_session_context"]


class _LastEntry(Enum):
    LAST_ENTRY = "last entry"


LAST_ENTRY: Final = _LastEntry.LAST_ENTRY
"""Leaf argument meaning "the last entry in file order" (the reference's ``undefined``)."""


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A model as the session recorded it."""

    provider: str
    model_id: str


@dataclass(slots=True)
class SessionContext:
    """The model's view of the branch.

    :ivar messages: agent messages to send (convert with :func:`convert_to_llm`)
    :ivar entries: the entry each message came from (the compaction for its summary; the
        projected entry for a replaced one)
    :ivar thinking_level: the branch's thinking level (``"off"`` when never set)
    :ivar model: the branch's model, or ``None``
    """

    messages: list[AgentMessage] = field(default_factory=list)
    entries: list[SessionEntry] = field(default_factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None


def build_session_context(
    entries: Sequence[SessionEntry],
    leaf_id: str | Literal[_LastEntry.LAST_ENTRY] | None = LAST_ENTRY,
    by_id: Mapping[str, SessionEntry] | None = None,
) -> SessionContext:
    """Build the context for the branch ending at ``leaf_id`` (see the module docstring).

    :param entries: all entries in file order (no header)
    :param leaf_id: the leaf; ``None`` for "no leaf", :data:`LAST_ENTRY` for the last entry
    :param by_id: an id index of ``entries`` if the caller keeps one (saves rebuilding it)
    """
    if leaf_id is None:
        return SessionContext()
    if by_id is None:
        by_id = {entry["id"]: entry for entry in entries}
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) and leaf_id else None
    if leaf is None:
        if not entries:
            return SessionContext()
        leaf = entries[-1]
    path = path_to_root(by_id, leaf["id"])

    thinking_level = "off"
    model: tuple[str, str] | None = None
    compaction: CompactionEntry | None = None
    compaction_index = -1
    has_edits = False
    for index, entry in enumerate(path):
        # Direct comparisons (not a local alias) so the type checker narrows the entry.
        if entry["type"] == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                model = (str(message.get("provider", "")), str(message.get("model", "")))
        elif entry["type"] == "thinking_level_change":
            thinking_level = entry.get("thinkingLevel", thinking_level)
        elif entry["type"] == "model_change":
            model = (entry.get("provider", ""), entry.get("modelId", ""))
        elif entry["type"] == "compaction":
            compaction, compaction_index = entry, index
        elif entry["type"] == "context_edit":
            has_edits = True

    context = SessionContext(
        thinking_level=thinking_level, model=ModelRef(*model) if model else None
    )
    edits = collect_edits(path) if has_edits else {}
    if compaction is None:
        _emit(path, context, edits)
        return context

    context.messages.append(
        create_compaction_summary_message(
            compaction.get("summary", ""),
            compaction.get("tokensBefore", 0),
            compaction.get("timestamp", ""),
        )
    )
    context.entries.append(compaction)
    first_kept = compaction.get("firstKeptEntryId")
    kept_start = compaction_index  # nothing kept if the id is not on the path before it
    for index in range(compaction_index):
        if path[index]["id"] == first_kept:
            kept_start = index
            break
    _emit(path[kept_start:compaction_index], context, edits)
    _emit(path[compaction_index + 1 :], context, edits)
    return context


def _emit(
    entries: Sequence[SessionEntry], context: SessionContext, edits: Mapping[str, ContextEdit]
) -> None:
    messages, sources = context.messages, context.entries
    for entry in entries:
        if edits:
            edit = edits.get(entry["id"])
            if edit is not None:
                projected = apply_edit(entry, edit)
                if projected is not None and projected["type"] == "message":
                    messages.append(projected["message"])
                    sources.append(projected)
                continue
        if entry["type"] == "message":
            if isinstance(entry.get("message"), dict):  # a damaged line may lack it
                messages.append(entry["message"])
                sources.append(entry)
        elif entry["type"] == "custom_message":
            messages.append(
                create_custom_message(
                    entry.get("customType", ""),
                    entry.get("content", ""),
                    entry.get("display", False),
                    entry.get("details"),
                    entry.get("timestamp", ""),
                )
            )
            sources.append(entry)
        elif entry["type"] == "branch_summary" and entry.get("summary"):
            messages.append(
                create_branch_summary_message(
                    entry["summary"], entry.get("fromId", ""), entry.get("timestamp", "")
                )
            )
            sources.append(entry)
