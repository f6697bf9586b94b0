"""Where a compaction cuts: which entries are summarized and which are kept verbatim.

The walk goes backwards from the newest entry, adding up message estimates until
``keepRecentTokens`` are reached; the cut is the first valid cut point at or after that entry.
Valid cut points are messages a conversation can restart at — user, assistant, bash execution,
custom and summary messages, plus ``custom_message`` and ``branch_summary`` entries — and never a
tool result, which must stay behind its tool call. The cut is then extended backwards over
entries that are not messages (model and thinking changes, labels, plugin state), stopping at a
message or a compaction.

A cut that lands on anything but a user message splits a *user-message span* (a user message and
every turn up to the next one); :func:`find_turn_start_index` finds where that span began so the
early part can be summarized on its own.

The functions take any list of entries: the compaction passes the session *projection* (omitted
entries dropped), the reference's tests pass raw entries.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knightcode import estimate_tokens

if TYPE_CHECKING:
    from knightcode import SessionEntry

__all__ = ["CutPoint", "find_cut_point", "find_turn_start_index", "find_valid_cut_points"]

_CUT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
_SPAN_START_ROLES = frozenset({"user", "bashExecution"})


@dataclass(frozen=True)
class CutPoint:
    """Result of :func:`find_cut_point`.

    :ivar first_kept_entry_index: index of the first entry kept verbatim
    :ivar turn_start_index: start of the user-message span the cut splits, or -1
    :ivar is_split_turn: whether the cut lies inside a user-message span
    :ivar budget_index: the entry at which the kept estimate reached the budget, or -1 when
        everything fits (used by the recovery rule in :mod:`.preparation`)
    """

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool
    budget_index: int = -1


def _role(entry: SessionEntry) -> str | None:
    return entry["message"]["role"] if entry["type"] == "message" else None


def find_valid_cut_points(entries: Sequence[SessionEntry], start: int, end: int) -> list[int]:
    """Indices in ``[start, end)`` where a kept region may begin."""
    points = []
    for index in range(start, end):
        entry = entries[index]
        kind = entry["type"]
        if kind == "message":
            if _role(entry) in _CUT_ROLES:
                points.append(index)
        elif kind == "branch_summary" or kind == "custom_message":
            points.append(index)
    return points


def find_turn_start_index(entries: Sequence[SessionEntry], entry_index: int, start: int) -> int:
    """The user message (or bash execution, custom message, branch summary) that starts the
    user-message span holding ``entry_index``, searching no further back than ``start``; -1 if
    there is none.
    """
    for index in range(entry_index, start - 1, -1):
        entry = entries[index]
        kind = entry["type"]
        if kind == "branch_summary" or kind == "custom_message":
            return index
        if kind == "message" and _role(entry) in _SPAN_START_ROLES:
            return index
    return -1


def find_cut_point(
    entries: Sequence[SessionEntry], start: int, end: int, keep_recent_tokens: int
) -> CutPoint:
    """The cut that keeps about ``keep_recent_tokens`` of the newest messages in ``[start, end)``.

    Without any valid cut point the kept region starts at ``start``. When every message fits the
    budget, or the budget runs out after the last valid cut point, everything from the first
    valid cut point is kept (the reference's behaviour).
    """
    points = find_valid_cut_points(entries, start, end)
    if not points:
        return CutPoint(start, -1, False)
    cut = points[0]
    budget_index = -1
    accumulated = 0
    for index in range(end - 1, start - 1, -1):
        entry = entries[index]
        if entry["type"] != "message":
            continue  # custom_message and branch_summary entries add nothing, as in the reference
        accumulated += estimate_tokens(entry["message"])
        if accumulated >= keep_recent_tokens:
            budget_index = index
            position = bisect_left(points, index)
            if position < len(points):
                cut = points[position]
            break
    # Keep the metadata just before the cut (a model change belongs with what follows it).
    while cut > start:
        previous = entries[cut - 1]["type"]
        if previous == "message" or previous == "compaction":
            break
        cut -= 1
    cut_entry = entries[cut]
    is_user = _role(cut_entry) == "user"
    turn_start = -1 if is_user else find_turn_start_index(entries, cut, start)
    return CutPoint(cut, turn_start, not is_user and turn_start != -1, budget_index)
