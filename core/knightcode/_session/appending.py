"""The ``append_*`` methods of :class:`~knightcode._session.manager.SessionManager`.

Each builds one entry dict — fields in the reference's order, absent optionals omitted rather
than written as ``null`` — as a child of the current leaf, and hands it to ``_append``, which
indexes it, makes it the leaf, and writes it when the session is being written.
"""

from __future__ import annotations

from typing import TypeVar

from knightcode._session.errors import EntryNotFoundError
from knightcode._session.ids import iso_timestamp, new_entry_id
from knightcode._session.projection import is_valid_edit
from knightcode._session.tree import EntryIndex
from knightcode._types.entries import (
    CONTEXT_ENTRY_TYPES,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEdit,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from knightcode._types.messages import AgentMessage, ImageContent, TextContent, Usage

__all__ = ["EntryAppender"]


class EntryAppender:
    """Adds entries at the leaf; the session manager supplies the index and ``_append``."""

    _index: EntryIndex

    def _append(self, entry: SessionEntry) -> str:
        raise NotImplementedError

    def _placement(self) -> tuple[str, str | None, str]:
        # The fields every new entry has besides its type: a fresh id, the leaf as its parent,
        # and the time now. Each entry is then one dict literal, its keys in the file's order.
        return new_entry_id(self._index.by_id), self._index.leaf_id, iso_timestamp()

    def append_message(self, message: AgentMessage) -> str:
        """Append a message (user, assistant, toolResult, bashExecution or custom); returns its id.

        Summaries are entries of their own (:meth:`append_compaction`,
        :meth:`branch_with_summary`), so their message roles are refused here.
        """
        if message.get("role") in ("compactionSummary", "branchSummary"):
            raise ValueError(
                f"append a {message['role']} through its own entry type, not a message"
            )
        entry_id, parent_id, timestamp = self._placement()
        entry: MessageEntry = {
            "type": "message",
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            "message": message,
        }
        return self._append(entry)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        """Record a new thinking level."""
        entry_id, parent_id, timestamp = self._placement()
        entry: ThinkingLevelChangeEntry = {
            "type": "thinking_level_change",
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            "thinkingLevel": thinking_level,
        }
        return self._append(entry)

    def append_model_change(self, provider: str, model_id: str) -> str:
        """Record a model switch."""
        entry_id, parent_id, timestamp = self._placement()
        entry: ModelChangeEntry = {
            "type": "model_change",
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            "provider": provider,
            "modelId": model_id,
        }
        return self._append(entry)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: object = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> str:
        """Record a compaction: the context restarts at ``first_kept_entry_id`` after ``summary``.

        ``first_kept_entry_id=None`` records a retain-none compaction, which keeps nothing: its
        ``firstKeptEntryId`` is its own id, so the context is the summary alone and a later
        compaction starts after this entry.
        """
        entry_id, parent_id, timestamp = self._placement()
        entry: CompactionEntry = {
            "type": "compaction",
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            "summary": summary,
            "firstKeptEntryId": entry_id if first_kept_entry_id is None else first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
        return self._append(_with_summary_extras(entry, usage, details, from_hook))

    def append_branch_summary(
        self,
        summary: str,
        from_id: str,
        details: object = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> str:
        """Append a ``branch_summary`` at the current leaf (``from_id``: the branch left)."""
        entry_id, parent_id, timestamp = self._placement()
        entry: BranchSummaryEntry = {
            "type": "branch_summary",
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            "fromId": from_id,
            "summary": summary,
        }
        return self._append(_with_summary_extras(entry, usage, details, from_hook))

    def append_custom(self, custom_type: str, data: object = None) -> str:
        """Store plugin state (never sent to the model)."""
        entry_id, parent_id, timestamp = self._placement()
        # The reference writes the placement fields last, after the optional data.
        entry: CustomEntry
        if data is None:
            entry = {
                "type": "custom",
                "customType": custom_type,
                "id": entry_id,
                "parentId": parent_id,
                "timestamp": timestamp,
            }
        else:
            entry = {
                "type": "custom",
                "customType": custom_type,
                "data": data,
                "id": entry_id,
                "parentId": parent_id,
                "timestamp": timestamp,
            }
        return self._append(entry)

    def append_custom_message(
        self,
        custom_type: str,
        content: str | list[TextContent | ImageContent],
        display: bool,
        details: object = None,
    ) -> str:
        """Add a plugin message to the context (sent as a user message)."""
        entry_id, parent_id, timestamp = self._placement()
        entry: CustomMessageEntry
        if details is None:
            entry = {
                "type": "custom_message",
                "customType": custom_type,
                "content": content,
                "display": display,
                "id": entry_id,
                "parentId": parent_id,
                "timestamp": timestamp,
            }
        else:
            entry = {
                "type": "custom_message",
                "customType": custom_type,
                "content": content,
                "display": display,
                "details": details,
                "id": entry_id,
                "parentId": parent_id,
                "timestamp": timestamp,
            }
        return self._append(entry)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with ``None``/``""`` clear) the label of ``target_id``; the last one wins.

        :raises EntryNotFoundError: if the target does not exist
        """
        if target_id not in self._index.by_id:
            raise EntryNotFoundError(target_id)
        entry_id, parent_id, timestamp = self._placement()
        entry: LabelEntry = {
            "type": "label",
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            "targetId": target_id,
        }
        if label is not None:
            entry["label"] = label
        return self._append(entry)

    def append_session_info(self, name: str) -> str:
        """Name the session (the name is stored trimmed)."""
        entry_id, parent_id, timestamp = self._placement()
        entry: SessionInfoEntry = {
            "type": "session_info",
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            "name": name.strip(),
        }
        return self._append(entry)

    def append_context_edit(self, edits: list[ContextEdit], reason: str | None = None) -> str:
        """Hide (``omit``) or replace earlier entries of the current branch in the model's view.

        :raises ValueError: for a malformed edit, or a target that cannot take it
        :raises EntryNotFoundError: for a target that is not on the current branch
        """
        on_branch = {entry["id"]: entry for entry in self._index.path(self._index.leaf_id)}
        for edit in edits:
            if not is_valid_edit(edit):
                raise ValueError(f"invalid context edit: {edit!r}")
            target = on_branch.get(edit["targetId"])
            if target is None:
                raise EntryNotFoundError(edit["targetId"])
            if edit["op"] == "omit" and target["type"] == "compaction":
                raise ValueError("a compaction entry cannot be omitted")
            if edit["op"] == "replace" and target["type"] not in CONTEXT_ENTRY_TYPES:
                raise ValueError(
                    f"entry {target['id']} ({target['type']}) has no message to replace"
                )
        entry_id, parent_id, timestamp = self._placement()
        entry: ContextEditEntry = {
            "type": "context_edit",
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            "edits": list(edits),
        }
        if reason is not None:
            entry["reason"] = reason
        return self._append(entry)

    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: object = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> str:
        """Move the leaf to ``branch_from_id`` (``None``: before the root) and append a summary
        of the branch left behind (``fromId`` is ``"root"`` when branching from ``None``).

        :raises EntryNotFoundError: if ``branch_from_id`` does not exist
        """
        if branch_from_id is not None and branch_from_id not in self._index.by_id:
            raise EntryNotFoundError(branch_from_id)
        self._index.leaf_id = branch_from_id
        return self.append_branch_summary(
            summary, branch_from_id or "root", details, from_hook, usage
        )


_Summary = TypeVar("_Summary", CompactionEntry, BranchSummaryEntry)


def _with_summary_extras(
    entry: _Summary, usage: Usage | None, details: object, from_hook: bool | None
) -> _Summary:
    # Absent optional fields are omitted, never written as null (JSON.stringify drops
    # undefined), in the reference's order.
    if usage is not None:
        entry["usage"] = usage
    if details is not None:
        entry["details"] = details
    if from_hook is not None:
        entry["fromHook"] = from_hook
    return entry
