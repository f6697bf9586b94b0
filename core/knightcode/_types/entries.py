"""The lines of a session file: the header and every entry type, as ``TypedDict`` shapes.

Entries stay the plain dicts ``json`` produced — a 100 000-entry session is loaded without
building an object per entry — and these types only tell the type checker (and the reader)
which camelCase keys each kind carries. Optional fields are ``NotRequired``: when absent they
are omitted from the file, never written as ``null``.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from knightcode._types.messages import AgentMessage, Usage, UserContent

__all__ = [
    "CONTEXT_ENTRY_TYPES",
    "CURRENT_SESSION_VERSION",
    "ENTRY_TYPES",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextEdit",
    "ContextEditEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "FileEntry",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "OmitEdit",
    "ReplaceEdit",
    "SessionEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "ThinkingLevelChangeEntry",
    "make_header",
]

CURRENT_SESSION_VERSION = 3

ENTRY_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "context_edit",
    }
)
"""Entry types this version writes. Unknown types read from a file are kept and ignored."""

CONTEXT_ENTRY_TYPES = frozenset({"message", "custom_message", "branch_summary"})
"""Entry types that contribute a message to the model's context (besides compaction summaries)."""


class SessionHeader(TypedDict):
    """First line of the file; not part of the tree. ``version`` absent means version 1."""

    type: Literal["session"]
    version: NotRequired[int]
    id: str
    timestamp: str
    cwd: str
    parentSession: NotRequired[str]


class MessageEntry(TypedDict):
    type: Literal["message"]
    id: str
    parentId: str | None
    timestamp: str
    message: AgentMessage


class ThinkingLevelChangeEntry(TypedDict):
    type: Literal["thinking_level_change"]
    id: str
    parentId: str | None
    timestamp: str
    thinkingLevel: str


class ModelChangeEntry(TypedDict):
    type: Literal["model_change"]
    id: str
    parentId: str | None
    timestamp: str
    provider: str
    modelId: str


class CompactionEntry(TypedDict):
    """Older history summarised; the context restarts at ``firstKeptEntryId``."""

    type: Literal["compaction"]
    id: str
    parentId: str | None
    timestamp: str
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    usage: NotRequired[Usage]  # LLM usage of the summary request
    details: NotRequired[object]  # default compaction: {"readFiles": [...], "modifiedFiles": [...]}
    fromHook: NotRequired[bool]  # true when a plugin supplied the summary (legacy name)


class BranchSummaryEntry(TypedDict):
    """A summary of the branch the user navigated away from; ``fromId`` is ``"root"`` at the top."""

    type: Literal["branch_summary"]
    id: str
    parentId: str | None
    timestamp: str
    fromId: str
    summary: str
    usage: NotRequired[Usage]
    details: NotRequired[object]
    fromHook: NotRequired[bool]


class CustomEntry(TypedDict):
    """Plugin state; never part of the model's context."""

    type: Literal["custom"]
    customType: str
    data: NotRequired[object]
    id: str
    parentId: str | None
    timestamp: str


class CustomMessageEntry(TypedDict):
    """A plugin message that is part of the context (as a user message)."""

    type: Literal["custom_message"]
    customType: str
    content: str | list[UserContent]
    display: bool
    details: NotRequired[object]
    id: str
    parentId: str | None
    timestamp: str


class LabelEntry(TypedDict):
    """Sets (or, without ``label``, clears) the bookmark on ``targetId``; the last one wins."""

    type: Literal["label"]
    id: str
    parentId: str | None
    timestamp: str
    targetId: str
    label: NotRequired[str]


class SessionInfoEntry(TypedDict):
    type: Literal["session_info"]
    id: str
    parentId: str | None
    timestamp: str
    name: NotRequired[str]


class OmitEdit(TypedDict):
    """Hide ``targetId`` from the model's context."""

    op: Literal["omit"]
    targetId: str


class ReplaceEdit(TypedDict):
    """Show ``message`` to the model in place of the message of ``targetId``."""

    op: Literal["replace"]
    targetId: str
    message: AgentMessage


ContextEdit = OmitEdit | ReplaceEdit


class ContextEditEntry(TypedDict):
    """knightcode's own entry: edits to what the model sees, raw entries untouched.

    Edits apply to entries before this one on the same branch; a later edit of the same target
    replaces an earlier one. See ``docs/session-format.md`` ("context_edit and the projection").
    """

    type: Literal["context_edit"]
    id: str
    parentId: str | None
    timestamp: str
    edits: list[ContextEdit]
    reason: NotRequired[str]


SessionEntry = (
    MessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | ContextEditEntry
)
"""A line of the tree: has ``id``, ``parentId`` (``None`` for a root) and ``timestamp``."""

FileEntry = SessionHeader | SessionEntry
"""Any line of a session file."""


def make_header(
    session_id: str, timestamp: str, cwd: str, parent_session: str | None = None
) -> SessionHeader:
    """A version-3 header (``parentSession`` only when there is one)."""
    header: SessionHeader = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header
