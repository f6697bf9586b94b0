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
   leaf becomes its parent and its text is returned as ``editor_text``; anything else becomes
   the leaf itself. With a summary, a ``branch_summary`` entry is appended there (the label goes
   on it); without one, the label goes on the target.
4. The agent's messages are rebuilt from the session, and ``session_tree`` fires.

``/undo`` navigates with ``summarize=False``: it never summarizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from knightcode._abort import Aborted, AbortSignal
from knightcode._plugins.preparations import TreePreparation
from knightcode._plugins.results import BranchSummary, Cancel, TreeNavigationOptions
from knightcode._session.errors import EntryNotFoundError
from knightcode._session.messages import content_text

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._session.manager import SessionManager
    from knightcode._types.entries import BranchSummaryEntry, SessionEntry

__all__ = ["TreeResult", "collect_entries_for_branch_summary", "navigate_tree"]


@dataclass(frozen=True)
class TreeResult:
    """What a move did.

    :param cancelled: a handler cancelled it, or the summary was aborted
    :param aborted: the summary being generated was aborted
    :param editor_text: the text of a user or custom message target, for the editor
    :param summary_entry: the ``branch_summary`` entry written, if one was
    """

    cancelled: bool = False
    aborted: bool = False
    editor_text: str | None = None
    summary_entry: BranchSummaryEntry | None = None


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
        current = entry["parentId"]
    entries.reverse()
    return entries, ancestor


async def navigate_tree(
    agent: AgentSession,
    target_id: str,
    *,
    summarize: bool,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    label: str | None = None,
    signal: AbortSignal | None = None,
) -> TreeResult:
    """Move ``agent``'s session to ``target_id`` (see the module docstring).

    :param signal: aborts a summary being generated
    :raises EntryNotFoundError: ``target_id`` is not in the session
    :raises AgentBusyError: the agent is working
    :raises CompactionUnavailableError: a summary was asked for and no plugin can make one
    :raises KnightcodeError: generating the summary failed
    """
    from knightcode._agent.session import AgentBusyError, CompactionUnavailableError

    session = agent.session
    old_leaf = session.leaf_id
    if target_id == old_leaf:
        return TreeResult()
    target = session.get_entry(target_id)
    if target is None:
        raise EntryNotFoundError(target_id)
    if agent.is_streaming:
        raise AgentBusyError(
            "Wait for the agent to finish (or abort it) before moving in the tree."
        )
    signal = signal or AbortSignal()
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
    hooks = agent.hooks
    answer = (
        await hooks.session_before_tree(preparation=prep, signal=signal)
        if hooks is not None
        else None
    )
    if isinstance(answer, Cancel):
        return TreeResult(cancelled=True)
    options = answer if isinstance(answer, TreeNavigationOptions) else TreeNavigationOptions()
    instructions = (
        options.custom_instructions
        if options.custom_instructions is not None
        else prep.custom_instructions
    )
    replace = (
        options.replace_instructions
        if options.replace_instructions is not None
        else prep.replace_instructions
    )
    label = options.label if options.label is not None else prep.label

    summary: BranchSummary | None = None
    from_extension = False
    if summarize and options.summary is not None:
        summary, from_extension = options.summary, True
    elif summarize and entries:
        if prep.summarizer is None:
            raise CompactionUnavailableError(
                "branch summaries are disabled: the builtin:compaction plugin is not loaded"
            )
        try:
            summary = await prep.summarizer(
                entries,
                custom_instructions=instructions,
                replace_instructions=replace,
                signal=signal,
            )
        except Aborted:
            return TreeResult(cancelled=True, aborted=True)

    editor_text: str | None = None
    new_leaf: str | None = target_id
    if target["type"] == "message" and target["message"]["role"] == "user":
        new_leaf, editor_text = target["parentId"], content_text(target["message"]["content"])
    elif target["type"] == "custom_message":
        new_leaf, editor_text = target["parentId"], content_text(target["content"])

    if new_leaf is None:
        session.reset_leaf()
    else:
        session.branch(new_leaf)
    summary_entry: BranchSummaryEntry | None = None
    if summary is not None and summary.summary:
        # fromId names the entry navigated *from* (spec: "Entry we navigated from").
        summary_id = session.append_branch_summary(
            summary.summary,
            old_leaf or "root",
            summary.details,
            True if from_extension else None,
            summary.usage,
        )
        written = session.get_entry(summary_id)
        assert written is not None and written["type"] == "branch_summary"
        summary_entry = written
        if label:
            session.append_label(summary_id, label)
    elif label:
        session.append_label(target_id, label)
    agent.rebuild_messages()
    if hooks is not None:
        await hooks.session_tree(
            new_leaf_id=session.leaf_id,
            old_leaf_id=old_leaf,
            summary_entry=summary_entry,
            from_extension=from_extension,
        )
    return TreeResult(editor_text=editor_text, summary_entry=summary_entry)
