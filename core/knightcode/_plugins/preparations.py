"""What ``session_before_compact`` and ``session_before_tree`` handlers receive to work from.

The compaction plugin (``builtin:compaction``) builds a :class:`CompactionPreparation`; the
kernel's tree navigation builds a :class:`TreePreparation`. Both are declared here, in the
kernel, because they are part of the hook contract every plugin sees.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal
    from knightcode._config.compaction_settings import CompactionSettings
    from knightcode._plugins.results import BranchSummary
    from knightcode._types.entries import SessionEntry
    from knightcode._types.messages import AgentMessage

__all__ = ["BranchSummarizer", "CompactionPreparation", "FileOperations", "TreePreparation"]


@dataclass
class FileOperations:
    """Paths seen in ``read``, ``write`` and ``edit`` tool calls (and carried from summaries)."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)


@dataclass
class CompactionPreparation:
    """What the default compaction works from (and a plugin's may).

    :ivar first_kept_entry_id: the first entry kept verbatim
    :ivar messages_to_summarize: the messages to summarize, from the previous kept boundary (or
        the session start) up to the cut point
    :ivar turn_prefix_messages: the early part of a split user-message span (empty unless
        ``is_split_turn``)
    :ivar is_split_turn: whether the cut point lies inside a user-message span
    :ivar tokens_before: the context tokens before compaction (context edits applied)
    :ivar previous_summary: the summary of the previous compaction, or None
    :ivar file_ops: the files read, written and edited in those messages, carried on from the
        previous knightcode-generated compaction
    :ivar settings: the compaction settings in effect for the model (per-model overrides applied)
    :ivar retain_none: whether nothing the model sees is kept (overflow recovery)
    :ivar labels: labels (user bookmarks) of the summarized entries
    """

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations
    settings: CompactionSettings
    retain_none: bool = False
    labels: list[str] = field(default_factory=list)


class BranchSummarizer(Protocol):
    """Writes the default summary of a branch; raises ``Aborted`` when the signal is set."""

    def __call__(
        self,
        entries: list[SessionEntry],
        *,
        custom_instructions: str | None,
        replace_instructions: bool,
        signal: AbortSignal,
    ) -> Awaitable[BranchSummary]: ...


@dataclass
class TreePreparation:
    """A ``/tree`` move about to happen.

    :ivar target_id: the entry being navigated to
    :ivar old_leaf_id: the current position, being left (None in an empty session)
    :ivar common_ancestor_id: the deepest entry shared by both positions, or None
    :ivar entries_to_summarize: the entries from the common ancestor (exclusive) to the old leaf,
        oldest first
    :ivar user_wants_summary: whether the user chose to summarize the branch being left
    :ivar custom_instructions: the user's instructions for the summary, or None
    :ivar replace_instructions: whether they replace the default summary prompt
    :ivar label: the label the user wants on the summary entry (or the target), or None
    :ivar summarizer: the default summarizer, offered by ``builtin:compaction`` (None when it is
        disabled); knightcode calls it only when no handler cancelled or supplied a summary
    """

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[SessionEntry]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None
    summarizer: BranchSummarizer | None = None
