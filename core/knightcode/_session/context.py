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
5. An entry of a context type whose fields have the wrong types (see
   :mod:`~knightcode._session.validation`) is left out and listed in
   :attr:`SessionContext.skipped`; a skipped compaction is no boundary, a skipped model or
   thinking-level change sets nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, Literal, NamedTuple, cast

from knightcode._session.messages import (
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)
from knightcode._session.projection import apply_edit, collect_edits
from knightcode._session.tree import path_to_root
from knightcode._session.validation import entry_problem, message_problem
from knightcode._types.entries import (
    CompactionEntry,
    ContextEdit,
    ModelChangeEntry,
    SessionEntry,
    ThinkingLevelChangeEntry,
)
from knightcode._types.messages import AgentMessage

__all__ = ["LAST_ENTRY", "ModelRef", "SessionContext", "SkippedEntry", "build_session_context"]


class _LastEntry(Enum):
    LAST_ENTRY = "last entry"


LAST_ENTRY: Final = _LastEntry.LAST_ENTRY
"""Leaf argument meaning "the last entry in file order" (the reference's ``undefined``)."""


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A model as the session recorded it."""

    provider: str
    model_id: str


class SkippedEntry(NamedTuple):
    """An entry on the path that the context left out because its fields are damaged."""

    entry_id: str
    problem: str


@dataclass(slots=True)
class SessionContext:
    """The model's view of the branch.

    :ivar messages: agent messages to send (convert with :func:`convert_to_llm`)
    :ivar entries: the entry each message came from (the compaction for its summary; the
        projected entry for a replaced one)
    :ivar thinking_level: the branch's thinking level (``"off"`` when never set)
    :ivar model: the branch's model, or ``None``
    :ivar skipped: the path's entries left out because their fields are damaged, root first
    """

    messages: list[AgentMessage] = field(default_factory=list)
    entries: list[SessionEntry] = field(default_factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None
    skipped: list[SkippedEntry] = field(default_factory=list)


def build_session_context(
    entries: Sequence[SessionEntry],
    leaf_id: str | Literal[_LastEntry.LAST_ENTRY] | None = LAST_ENTRY,
    by_id: Mapping[str, SessionEntry] | None = None,
    message_problems: Mapping[str, str] | None = None,
) -> SessionContext:
    """Build the context for the branch ending at ``leaf_id`` (see the module docstring).

    :param entries: all entries in file order (no header)
    :param leaf_id: the leaf; ``None`` for "no leaf", :data:`LAST_ENTRY` for the last entry
    :param by_id: an id index of ``entries`` if the caller keeps one (saves rebuilding it)
    :param message_problems: the problem of each damaged ``message`` entry by id, when the
        caller checked them already (the loader does, while each entry is in the CPU cache:
        checking 100 000 messages here would cost ~60 ms of cache misses); ``None``: each
        message on the path is checked here
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
    branch = _walk(by_id, leaf["id"], message_problems)
    path = branch.path
    context = SessionContext(
        thinking_level=branch.thinking_level, model=branch.model, skipped=branch.skipped
    )
    invalid = {skipped.entry_id for skipped in branch.skipped}
    edits = collect_edits(path) if branch.has_edits else {}
    compaction_index = branch.compaction_index
    if compaction_index < 0:
        if edits:
            _emit(path, context, edits, invalid)
        else:
            _emit_collected(branch, context)
        return context

    compaction = cast(CompactionEntry, path[compaction_index])
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
    _emit(path[kept_start:compaction_index], context, edits, invalid)
    _emit(path[compaction_index + 1 :], context, edits, invalid)
    return context


@dataclass(slots=True)
class _Branch:
    """The path root→leaf and what the context needs from it, collected in one walk.

    :ivar path: the entries from the root to the leaf
    :ivar sources: the entries that may give a message (``message``, ``custom_message``,
        ``branch_summary``), in order
    :ivar messages: for each source, its ``message`` value (``None`` for the other two types)
    :ivar irregular: positions in ``sources`` whose message is not simply that dict
    :ivar compaction_index: position in ``path`` of the last compaction, or -1
    :ivar skipped: the entries of ``path`` whose fields are damaged, root first
    """

    path: list[SessionEntry] = field(default_factory=list)
    sources: list[SessionEntry] = field(default_factory=list)
    messages: list[object] = field(default_factory=list)
    irregular: list[int] = field(default_factory=list)
    compaction_index: int = -1
    thinking_level: str = "off"
    model: ModelRef | None = None
    has_edits: bool = False
    skipped: list[SkippedEntry] = field(default_factory=list)


class _ParentCycle(Exception):
    """The walk from the leaf did not reach a root: a damaged file links parents in a cycle."""


def _up(by_id: Mapping[str, SessionEntry], leaf_id: str) -> Iterator[SessionEntry]:
    # path_to_root's walk, leaf first, without building the path.
    get = by_id.get
    current = get(leaf_id)
    for _ in range(len(by_id)):
        if current is None:
            return
        yield current
        parent_id = current.get("parentId")
        current = get(parent_id) if type(parent_id) is str and parent_id else None
    if current is not None:
        raise _ParentCycle


def _walk(
    by_id: Mapping[str, SessionEntry], leaf_id: str, problems: Mapping[str, str] | None
) -> _Branch:
    # path_to_root, collecting on the way. Walking 100 000 entries is bound by memory latency
    # (each entry is somewhere else in memory), so each entry is visited once, from the leaf:
    # the first thinking level, model and compaction met are the last ones of the path.
    try:
        return _collect(_up(by_id, leaf_id), problems)
    except _ParentCycle:
        return _collect(reversed(path_to_root(by_id, leaf_id)), problems)


def _collect(entries: Iterable[SessionEntry], problems: Mapping[str, str] | None) -> _Branch:
    # The branch from its entries, leaf first.
    branch = _Branch()
    path, sources, messages = branch.path, branch.sources, branch.messages
    irregular: list[int] = []  # counted from the leaf
    thinking: str | None = None
    model_found = False
    compaction_at = -1  # counted from the leaf
    skipped = branch.skipped  # leaf first until reversed below
    for current in entries:
        path.append(current)
        kind = current["type"]
        if kind == "message":
            message = current.get("message")
            if problems is None:
                problem = message_problem(message)
            else:
                problem = problems.get(current["id"]) if problems else None
            if problem is not None or type(message) is not dict:
                skipped.append(SkippedEntry(str(current.get("id")), problem or ""))
                continue
            if not model_found and message.get("role") == "assistant":
                branch.model = ModelRef(
                    str(message.get("provider", "")), str(message.get("model", ""))
                )
                model_found = True
            sources.append(current)
            messages.append(message)
        elif (problem := entry_problem(current)) is not None:
            skipped.append(SkippedEntry(str(current.get("id")), problem))
        elif kind == "custom_message" or kind == "branch_summary":
            irregular.append(len(sources))
            sources.append(current)
            messages.append(None)
        elif kind == "thinking_level_change":
            if thinking is None and "thinkingLevel" in current:
                thinking = cast(ThinkingLevelChangeEntry, current)["thinkingLevel"]
        elif kind == "model_change":
            if not model_found:
                change = cast(ModelChangeEntry, current)
                branch.model = ModelRef(change.get("provider", ""), change.get("modelId", ""))
                model_found = True
        elif kind == "compaction":
            if compaction_at < 0:
                compaction_at = len(path) - 1
        elif kind == "context_edit":
            branch.has_edits = True
    if thinking is not None:
        branch.thinking_level = thinking
    path.reverse()
    skipped.reverse()
    sources.reverse()
    messages.reverse()
    last = len(sources) - 1
    branch.irregular = [last - position for position in reversed(irregular)]
    branch.compaction_index = len(path) - 1 - compaction_at if compaction_at >= 0 else -1
    return branch


def _emit_collected(branch: _Branch, context: SessionContext) -> None:
    # The whole path without edits: the collected messages, with the other sources' messages
    # made in their places and damaged message entries left out.
    messages = cast(list[AgentMessage], branch.messages)
    sources = branch.sources
    if not branch.irregular:
        context.messages, context.entries = messages, sources
        return
    start = 0
    for position in branch.irregular:
        context.messages.extend(messages[start:position])
        context.entries.extend(sources[start:position])
        _emit(sources[position : position + 1], context, {})
        start = position + 1
    context.messages.extend(messages[start:])
    context.entries.extend(sources[start:])


def _emit(
    entries: Sequence[SessionEntry],
    context: SessionContext,
    edits: Mapping[str, ContextEdit],
    invalid: frozenset[str] | set[str] = frozenset(),
) -> None:
    messages, sources = context.messages, context.entries
    for entry in entries:
        if invalid and entry["id"] in invalid:
            continue
        if edits:
            edit = edits.get(entry["id"])
            if edit is not None:
                projected = apply_edit(entry, edit)
                if (
                    projected is not None
                    and projected["type"] == "message"
                    and _usable_replacement(projected, context)
                ):
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


def _usable_replacement(projected: SessionEntry, context: SessionContext) -> bool:
    # A context_edit's replacement message is checked like a stored one.
    problem = message_problem(projected.get("message"))
    if problem is None:
        return True
    context.skipped.append(SkippedEntry(projected["id"], f"its replacement: {problem}"))
    return False
