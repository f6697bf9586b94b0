"""What a compaction works from: :func:`prepare_compaction` (the reference's ``prepareCompaction``).

It reads the *projection* of the branch (``context_edit`` omissions dropped, replacements
applied), so omitted attempts affect neither the cut nor the summary nor the estimates.

* The summarized span starts at the previous compaction's kept boundary (``firstKeptEntryId``):
  messages that survived the last compaction are summarized again, together with the previous
  summary as iterative context. When that entry is gone from the projection, the span starts
  at the next entry still there, and failing that right after the previous compaction (which is
  also where a retain-none compaction, whose ``firstKeptEntryId`` is its own id, continues).
* ``tokensBefore`` is estimated from the context the model sees now (edits applied).
* **Recovery advancement.** After an overflow or an early ``length`` stop the branch ends with a
  context-invisible suffix: the omitted attempt, its ``context_edit`` and maybe metadata. When
  the input the attempt answered is itself over the kept budget — the cut can keep nothing
  smaller than it — the kept boundary moves into that suffix, so the input is summarized
  instead of being sent again as it was. Only when the suffix holds an omitted assistant attempt
  and nothing the model sees, and no ``replace`` edit touches an entry before it (the attempt
  answered the unedited input). Metadata alone, or a custom message appended after the attempt,
  never moves the cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from knightcode import (
    CompactionPreparation,
    FileOperations,
    SessionProjection,
    build_session_context,
    create_branch_summary_message,
    create_custom_message,
    estimate_context_tokens,
    estimate_tokens,
    project_path,
)

from .cut_point import CutPoint, find_cut_point, find_valid_cut_points
from .file_ops import carry_details, extract_file_ops

if TYPE_CHECKING:
    from knightcode import AgentMessage, CompactionSettings, SessionEntry

__all__ = ["estimate_messages", "message_of", "prepare_compaction"]

_CONTEXT_TYPES = frozenset({"message", "custom_message", "branch_summary"})


def message_of(entry: SessionEntry) -> AgentMessage | None:
    """The message an entry contributes to a summary (compactions contribute none: their
    summary is passed separately as the previous summary).
    """
    if entry["type"] == "message":
        return entry["message"]
    if entry["type"] == "custom_message":
        return create_custom_message(
            entry["customType"],
            entry["content"],
            entry["display"],
            entry.get("details"),
            entry["timestamp"],
        )
    if entry["type"] == "branch_summary":
        return create_branch_summary_message(entry["summary"], entry["fromId"], entry["timestamp"])
    return None


def _boundary_start(
    path: Sequence[SessionEntry], entries: Sequence[SessionEntry], previous: int
) -> int:
    """Where the summarized span starts: the previous compaction's kept entry (see module doc)."""
    if previous < 0:
        return 0
    compaction = entries[previous]
    kept = compaction["firstKeptEntryId"] if compaction["type"] == "compaction" else None
    position = {entries[i]["id"]: i for i in range(previous)}
    if kept in position:
        return position[kept]
    compaction_id = entries[previous]["id"]
    seen = False
    for entry in path:  # the kept entry may be omitted now: take the next one still projected
        if entry["id"] == compaction_id:
            break
        seen = seen or entry["id"] == kept
        if seen and entry["id"] in position:
            return position[entry["id"]]
    return previous + 1


def _invisible_suffix(path: Sequence[SessionEntry], projection: SessionProjection) -> int | None:
    """Raw index where a context-invisible suffix holding an omitted assistant attempt starts."""
    index = len(path)
    attempt = False
    while index > 0:
        entry = path[index - 1]
        if entry["id"] in projection.omitted:
            attempt = attempt or (
                entry["type"] == "message" and entry["message"]["role"] == "assistant"
            )
        elif entry["type"] in _CONTEXT_TYPES or entry["type"] == "compaction":
            break
        index -= 1
    if not attempt:
        return None
    before = {entry["id"] for entry in path[:index]}
    if any(target in before for target in projection.replaced):
        return None  # the attempt answered the unedited input
    return index


def _over_budget_input(entries: Sequence[SessionEntry], start: int, cut: CutPoint) -> bool:
    """Whether the cut cannot keep less than an input that is already over the budget."""
    if cut.budget_index < 0:
        return False
    points = find_valid_cut_points(entries, start, len(entries))
    later = [p for p in points if p >= cut.budget_index]
    # No cut point after the budget ran out, or the first one is already the last one.
    return not later or later[0] == points[-1]


def prepare_compaction(
    path: Sequence[SessionEntry],
    settings: CompactionSettings,
    context: Sequence[AgentMessage] | None = None,
) -> CompactionPreparation | None:
    """The preparation for compacting the branch ``path`` (root first), or None when there is
    nothing to compact (the branch ends with a compaction, or nothing can be kept or cut).

    :param context: the messages the model sees of ``path`` when the caller has them (the
        session builds them knowing which entries are damaged, checked once when it loaded);
        otherwise they are built here, checking every message of the path
    """
    if not path or path[-1]["type"] == "compaction":
        return None
    projection = project_path(path)
    entries = projection.entries
    previous = max((i for i, e in enumerate(entries) if e["type"] == "compaction"), default=-1)
    start = _boundary_start(path, entries, previous)
    end = len(entries)
    if context is None:
        context = build_session_context(list(path), path[-1]["id"]).messages
    tokens_before = estimate_context_tokens(context).tokens
    cut = find_cut_point(entries, start, end, settings.keep_recent_tokens)

    suffix = _invisible_suffix(path, projection)
    retain_none = suffix is not None and _over_budget_input(entries, start, cut)
    if retain_none:
        assert suffix is not None
        first_kept_id, history_end, split = path[suffix]["id"], end, False
    elif cut.first_kept_entry_index < end:
        first_kept_id = entries[cut.first_kept_entry_index]["id"]
        split = cut.is_split_turn
        history_end = cut.turn_start_index if split else cut.first_kept_entry_index
    else:
        return None
    summarized = [m for m in map(message_of, entries[start:history_end]) if m is not None]
    prefix: list[AgentMessage] = []
    summarized_end = history_end
    if split:
        summarized_end = cut.first_kept_entry_index
        span = entries[cut.turn_start_index : summarized_end]
        prefix = [m for m in map(message_of, span) if m is not None]

    ops = FileOperations()
    previous_summary = None
    if previous >= 0:
        compaction = entries[previous]
        if compaction["type"] == "compaction":
            previous_summary = compaction["summary"]
            carry_details(compaction, ops)
    extract_file_ops(summarized, ops)
    extract_file_ops(prefix, ops)
    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        messages_to_summarize=summarized,
        turn_prefix_messages=prefix,
        is_split_turn=split,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=ops,
        settings=settings,
        retain_none=retain_none,
        labels=_labels(path, entries[start:summarized_end]),
    )


def _labels(path: Sequence[SessionEntry], summarized: Sequence[SessionEntry]) -> list[str]:
    """Current labels of the summarized entries, oldest entry first."""
    ids = {entry["id"] for entry in summarized}
    labels: dict[str, str | None] = {}
    for entry in path:
        if entry["type"] == "label" and entry["targetId"] in ids:
            labels[entry["targetId"]] = entry.get("label") or None
    order = [entry["id"] for entry in summarized if labels.get(entry["id"])]
    return [str(labels[i]) for i in order]


def estimate_messages(messages: Sequence[AgentMessage]) -> int:
    """The sum of the per-message estimates (``estimatedTokensAfter``)."""
    return sum(estimate_tokens(message) for message in messages)
