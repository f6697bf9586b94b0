"""``context_edit`` entries and the session projection.

A ``context_edit`` entry hides earlier entries of its branch from the model (``omit``) or shows
the model a different message in their place (``replace``), for instance to drop an abandoned
attempt after a context overflow. The raw entries stay in the file untouched: exports, history
and the tree read raw entries; context building, token estimates and compaction's cut points
read the *projection* — the branch path with the edits applied.

Rules, in path order: an edit applies only to an entry that comes *before* the ``context_edit``
on the same path; a later edit of the same target replaces an earlier one; ``omit`` may target
any entry except a ``compaction`` (a compaction is a boundary, not content); ``replace`` may
target only entries that produce a context message (``message``, ``custom_message``,
``branch_summary``). Edits breaking these rules are ignored, so a damaged or hand-written edit
never makes a session unloadable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from knightcode._types.entries import CONTEXT_ENTRY_TYPES, ContextEdit, MessageEntry, SessionEntry
from knightcode._types.messages import AgentMessage

__all__ = ["SessionProjection", "apply_edit", "collect_edits", "is_valid_edit", "project_path"]


def is_valid_edit(edit: object) -> bool:
    """Whether ``edit`` has the shape of an edit (``op``, ``targetId``, a message to replace)."""
    if not isinstance(edit, dict) or not isinstance(edit.get("targetId"), str):
        return False
    op = edit.get("op")
    if op == "omit":
        return True
    message = edit.get("message")
    return op == "replace" and isinstance(message, dict) and isinstance(message.get("role"), str)


def _applies_to(edit: ContextEdit, target: SessionEntry) -> bool:
    kind = target["type"]
    if edit["op"] == "omit":
        return kind != "compaction"
    return kind in CONTEXT_ENTRY_TYPES


def collect_edits(path: Sequence[SessionEntry]) -> dict[str, ContextEdit]:
    """The effective edit per target id on ``path`` (root first), or ``{}`` when there are none."""
    for entry in path:
        if entry["type"] == "context_edit":
            break
    else:
        return {}  # the common case: one cheap scan, nothing built
    earlier: dict[str, SessionEntry] = {}
    effective: dict[str, ContextEdit] = {}
    for entry in path:
        if entry["type"] == "context_edit":
            for edit in entry.get("edits") or ():
                if not is_valid_edit(edit):
                    continue
                target = earlier.get(edit["targetId"])
                if target is not None and _applies_to(edit, target):
                    effective[edit["targetId"]] = edit
        earlier[entry["id"]] = entry
    return effective


def apply_edit(entry: SessionEntry, edit: ContextEdit) -> SessionEntry | None:
    """The projected form of ``entry`` under ``edit``: ``None`` when omitted.

    A replaced entry is projected as a ``message`` entry with the same id, parent and timestamp.
    """
    if edit["op"] == "omit":
        return None
    return _replacement(entry, edit["message"])


def _replacement(entry: SessionEntry, message: AgentMessage) -> MessageEntry:
    return {
        "type": "message",
        "id": entry["id"],
        "parentId": entry.get("parentId"),
        "timestamp": entry.get("timestamp", ""),
        "message": message,
    }


@dataclass(frozen=True, slots=True)
class SessionProjection:
    """A branch as the model sees it.

    :ivar path: the raw entries from the root to the leaf
    :ivar entries: ``path`` with edits applied: omitted entries dropped, replaced ones substituted
    :ivar omitted: ids of the entries the edits hide
    :ivar replaced: replacement message by target id
    """

    path: list[SessionEntry]
    entries: list[SessionEntry]
    omitted: frozenset[str]
    replaced: Mapping[str, AgentMessage]


def project_path(path: Sequence[SessionEntry]) -> SessionProjection:
    """Apply the ``context_edit`` entries of ``path`` (see the module docstring for the rules)."""
    edits = collect_edits(path)
    raw = list(path)
    if not edits:
        return SessionProjection(raw, list(raw), frozenset(), {})
    entries: list[SessionEntry] = []
    omitted: set[str] = set()
    replaced: dict[str, AgentMessage] = {}
    for entry in raw:
        edit = edits.get(entry["id"])
        if edit is None:
            entries.append(entry)
            continue
        if edit["op"] == "replace":
            replaced[entry["id"]] = edit["message"]
            entries.append(_replacement(entry, edit["message"]))
        else:
            omitted.add(entry["id"])
    return SessionProjection(raw, entries, frozenset(omitted), replaced)
