"""Moving to another point of the session tree (``/tree``, RPC), optionally summarizing the
branch that is left — the reference's ``navigateTree``.

1. The entries to summarize are those from the old leaf back to (not including) the deepest
   entry shared with the target's path, the common ancestor.
2. ``session_before_tree`` fires with a :class:`TreePreparation`, whether or not a summary was
   asked for. A plugin may cancel; supply the summary (used only when the user asked for one);
   or change the instructions and the label. The summarizing plugin (``builtin:compaction``)
   offers its default summarizer by setting ``preparation.summarizer``; it is called *after*
   every handler had its say, with the final instructions, and only if no plugin supplied a
   summary.
3. The leaf moves: a user message or custom message as target means "edit this message" — the
   leaf becomes its parent and its text is returned as ``editorText``; anything else becomes the
   leaf itself. With a summary, a ``branch_summary`` entry is appended there (the label goes on
   it); without one, the label goes on the target.
4. The agent's messages are rebuilt from the session, and ``session_tree`` fires.

``/undo`` navigates with ``summarize=False``: it never summarizes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from knightcode._session.errors import EntryNotFoundError

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._session.entries import SessionEntry
    from knightcode._session.manager import SessionManager

__all__ = [
    "BranchSummarizer",
    "TreePreparation",
    "collect_entries_for_branch_summary",
    "navigate_tree",
]


class BranchSummarizer(Protocol):
    """A default branch summary: ``{"summary", "details"?, "usage"?}`` or ``{"aborted": True}``."""

    def __call__(
        self,
        entries: list[Any],
        *,
        custom_instructions: str | None,
        replace_instructions: bool,
        signal: asyncio.Event,
    ) -> Awaitable[Mapping[str, Any]]: ...


@dataclass
class TreePreparation:
    """What ``session_before_tree`` handlers receive.

    :ivar target_id: the entry being navigated to
    :ivar old_leaf_id: the current position, being left (None in an empty session)
    :ivar common_ancestor_id: the deepest entry shared by both positions, or None
    :ivar entries_to_summarize: the entries from the common ancestor (exclusive) to the old leaf,
        oldest first
    :ivar user_wants_summary: whether the user asked for a summary of the branch left
    :ivar custom_instructions: the user's instructions for the summary, if any
    :ivar replace_instructions: whether they replace the default prompt instead of adding to it
    :ivar label: the label the user wants on the summary entry (or the target)
    :ivar summarizer: the default summarizer, offered by the summarizing plugin
    """

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[Any]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None
    summarizer: BranchSummarizer | None = None


def collect_entries_for_branch_summary(
    session: SessionManager, old_leaf_id: str | None, target_id: str
) -> tuple[list[SessionEntry], str | None]:
    """``(entries, common_ancestor_id)``: the entries from the old leaf back to the deepest
    entry on both paths (exclusive), oldest first. Compactions on the way are included.
    """
    if not old_leaf_id:
        return [], None
    old_path = {entry["id"] for entry in session.get_branch(old_leaf_id)}
    ancestor = next(
        (e["id"] for e in reversed(session.get_branch(target_id)) if e["id"] in old_path), None
    )
    entries: list[SessionEntry] = []
    current: str | None = old_leaf_id
    while current and current != ancestor:
        entry = session.get_entry(current)
        if entry is None:
            break
        entries.append(entry)
        current = entry.get("parentId")
    entries.reverse()
    return entries, ancestor


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


async def navigate_tree(
    agent: AgentSession,
    target_id: str,
    *,
    summarize: bool,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    label: str | None = None,
    signal: asyncio.Event | None = None,
) -> dict[str, Any]:
    """Move ``agent``'s session to ``target_id`` (see the module docstring).

    :param signal: aborts a summary being generated
    :returns: ``{"cancelled": bool}`` plus ``aborted`` (a summary was aborted), ``editorText``
        (the text of a user or custom message target) and ``summaryEntry`` when they apply
    :raises EntryNotFoundError: ``target_id`` is not in the session
    :raises AgentBusyError: the agent is working
    :raises CompactionUnavailableError: a summary was asked for and no plugin can make one
    :raises KnightcodeError: generating the summary failed
    """
    from knightcode._agent.session import AgentBusyError, CompactionUnavailableError

    session = agent.session
    old_leaf = session.leaf_id
    if target_id == old_leaf:
        return {"cancelled": False}
    target = session.get_entry(target_id)
    if target is None:
        raise EntryNotFoundError(target_id)
    if agent.is_streaming:
        raise AgentBusyError(
            "Wait for the agent to finish (or abort it) before moving in the tree."
        )
    signal = signal or asyncio.Event()
    entries, ancestor = collect_entries_for_branch_summary(session, old_leaf, target_id)
    prep = TreePreparation(
        target_id,
        old_leaf,
        ancestor,
        entries,
        summarize,
        custom_instructions,
        replace_instructions,
        label,
    )
    host = agent.host
    answer: Any = None
    if host is not None and host.has_handlers("session_before_tree"):
        answer = await host.emit("session_before_tree", preparation=prep, signal=signal)
    answer = answer if isinstance(answer, Mapping) else {}
    if answer.get("cancel"):
        return {"cancelled": True}
    instructions = answer.get("custom_instructions", prep.custom_instructions)
    replace = bool(answer.get("replace_instructions", prep.replace_instructions))
    label = answer.get("label", prep.label)

    summary: Mapping[str, Any] | None = None
    from_extension = False
    if summarize and isinstance(answer.get("summary"), Mapping):
        summary, from_extension = answer["summary"], True
    elif summarize and entries:
        if prep.summarizer is None:
            raise CompactionUnavailableError(
                "branch summaries are disabled: the builtin:compaction plugin is not loaded"
            )
        summary = await prep.summarizer(
            entries, custom_instructions=instructions, replace_instructions=replace, signal=signal
        )
        if summary.get("aborted"):
            return {"cancelled": True, "aborted": True}

    editor_text: str | None = None
    new_leaf: str | None = target_id
    if target["type"] == "message" and target["message"].get("role") == "user":
        new_leaf, editor_text = target.get("parentId"), _text_of(target["message"].get("content"))
    elif target["type"] == "custom_message":
        new_leaf, editor_text = target.get("parentId"), _text_of(target.get("content"))

    if new_leaf is None:
        session.reset_leaf()
    else:
        session.branch(new_leaf)
    summary_entry = None
    if summary is not None and summary.get("summary"):
        # fromId names the entry navigated *from* (spec: "Entry we navigated from").
        summary_id = session.append_branch_summary(
            str(summary["summary"]),
            old_leaf or "root",
            summary.get("details"),
            True if from_extension else None,
            summary.get("usage"),
        )
        summary_entry = session.get_entry(summary_id)
        if label:
            session.append_label(summary_id, label)
    elif label:
        session.append_label(target_id, label)
    agent.messages[:] = session.build_context().messages  # type: ignore[assignment]
    if host is not None and host.has_handlers("session_tree"):
        await host.emit(
            "session_tree",
            new_leaf_id=session.leaf_id,
            old_leaf_id=old_leaf,
            summary_entry=summary_entry,
            from_extension=from_extension,
        )
    result: dict[str, Any] = {"cancelled": False}
    if editor_text is not None:
        result["editorText"] = editor_text
    if summary_entry is not None:
        result["summaryEntry"] = summary_entry
    return result
