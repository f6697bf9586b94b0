"""The ``append_*`` methods of :class:`~knightcode._session.manager.SessionManager`.

Each builds one entry dict — fields in the reference's order, absent optionals omitted rather
than written as ``null`` — as a child of the current leaf, and hands it to ``_append``, which
indexes it, makes it the leaf, and writes it when the session is being written.
"""

from __future__ import annotations

from typing import Any

from knightcode._session.errors import EntryNotFoundError
from knightcode._session.ids import iso_timestamp, new_entry_id
from knightcode._session.projection import is_valid_edit
from knightcode._session.tree import EntryIndex
from knightcode._types.entries import CONTEXT_ENTRY_TYPES, ContextEdit
from knightcode._types.messages import AgentMessage, ImageContent, TextContent, Usage

__all__ = ["EntryAppender"]


class EntryAppender:
    """Adds entries at the leaf; the session manager supplies the index and ``_append``."""

    _index: EntryIndex

    def _append(self, entry: dict[str, Any]) -> str:
        raise NotImplementedError

    def _base(self, kind: str) -> dict[str, Any]:
        return {
            "type": kind,
            "id": new_entry_id(self._index.by_id),
            "parentId": self._index.leaf_id,
            "timestamp": iso_timestamp(),
        }

    def append_message(self, message: AgentMessage) -> str:
        """Append a message (user, assistant, toolResult, bashExecution or custom); returns its id.

        Summaries are entries of their own (:meth:`append_compaction`,
        :meth:`branch_with_summary`), so their message roles are refused here.
        """
        if message.get("role") in ("compactionSummary", "branchSummary"):
            raise ValueError(
                f"append a {message['role']} through its own entry type, not a message"
            )
        entry = self._base("message")
        entry["message"] = message
        return self._append(entry)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        """Record a new thinking level."""
        entry = self._base("thinking_level_change")
        entry["thinkingLevel"] = thinking_level
        return self._append(entry)

    def append_model_change(self, provider: str, model_id: str) -> str:
        """Record a model switch."""
        entry = self._base("model_change")
        entry["provider"] = provider
        entry["modelId"] = model_id
        return self._append(entry)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> str:
        """Record a compaction: the context restarts at ``first_kept_entry_id`` after ``summary``.

        ``first_kept_entry_id=None`` records a retain-none compaction, which keeps nothing: its
        ``firstKeptEntryId`` is its own id, so the context is the summary alone and a later
        compaction starts after this entry.
        """
        entry = self._base("compaction")
        entry.update(
            summary=summary,
            firstKeptEntryId=first_kept_entry_id
            if first_kept_entry_id is not None
            else entry["id"],
            tokensBefore=tokens_before,
        )
        _set_optional(entry, usage=usage, details=details, fromHook=from_hook)
        return self._append(entry)

    def append_branch_summary(
        self,
        summary: str,
        from_id: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> str:
        """Append a ``branch_summary`` at the current leaf (``from_id``: the branch left)."""
        entry = self._base("branch_summary")
        entry.update(fromId=from_id, summary=summary)
        _set_optional(entry, usage=usage, details=details, fromHook=from_hook)
        return self._append(entry)

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        """Store plugin state (never sent to the model)."""
        entry: dict[str, Any] = {"type": "custom", "customType": custom_type}
        _set_optional(entry, data=data)
        entry.update(self._base("custom"))  # the reference writes these fields last
        return self._append(entry)

    def append_custom_message(
        self,
        custom_type: str,
        content: str | list[TextContent | ImageContent],
        display: bool,
        details: Any = None,
    ) -> str:
        """Add a plugin message to the context (sent as a user message)."""
        entry: dict[str, Any] = {"type": "custom_message", "customType": custom_type}
        entry.update(content=content, display=display)
        _set_optional(entry, details=details)
        entry.update(self._base("custom_message"))
        return self._append(entry)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with ``None``/``""`` clear) the label of ``target_id``; the last one wins.

        :raises EntryNotFoundError: if the target does not exist
        """
        if target_id not in self._index.by_id:
            raise EntryNotFoundError(target_id)
        entry = self._base("label")
        entry["targetId"] = target_id
        _set_optional(entry, label=label)
        return self._append(entry)

    def append_session_info(self, name: str) -> str:
        """Name the session (the name is stored trimmed)."""
        entry = self._base("session_info")
        entry["name"] = name.strip()
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
        entry = self._base("context_edit")
        entry["edits"] = list(edits)
        _set_optional(entry, reason=reason)
        return self._append(entry)

    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any = None,
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


def _set_optional(entry: dict[str, Any], **fields: Any) -> None:
    # Absent optional fields are omitted, never written as null (JSON.stringify drops undefined).
    for key, value in fields.items():
        if value is not None:
            entry[key] = value
