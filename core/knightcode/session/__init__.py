"""The session store: conversations as trees of entries in append-only JSONL files.

The file format is byte-compatible with the reference tool's version 3 (see
``docs/session-format.md``); :class:`SessionManager` is the façade the agent uses.
"""

from __future__ import annotations

from knightcode.session.context import LAST_ENTRY, ModelRef, SessionContext, build_session_context
from knightcode.session.entries import (
    CURRENT_SESSION_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEdit,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    FileEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    OmitEdit,
    ReplaceEdit,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from knightcode.session.errors import EntryNotFoundError, SessionFileError
from knightcode.session.listing import (
    SessionInfo,
    find_most_recent_session,
    list_all_sessions,
    list_sessions,
)
from knightcode.session.loading import (
    LoadReport,
    load_entries_from_file,
    migrate_session_entries,
)
from knightcode.session.location import (
    SESSION_DIR_ENV,
    default_session_dir,
    encode_cwd,
    resolve_session_dir,
)
from knightcode.session.manager import SessionManager
from knightcode.session.messages import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    LlmMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
    convert_to_llm,
)
from knightcode.session.projection import SessionProjection, project_path
from knightcode.session.tokens import (
    ContextUsageEstimate,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
)
from knightcode.session.tree import SessionTreeNode

__all__ = [
    "CURRENT_SESSION_VERSION",
    "LAST_ENTRY",
    "SESSION_DIR_ENV",
    "AgentMessage",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryEntry",
    "BranchSummaryMessage",
    "CompactionEntry",
    "CompactionSummaryMessage",
    "ContextEdit",
    "ContextEditEntry",
    "ContextUsageEstimate",
    "CustomEntry",
    "CustomMessage",
    "CustomMessageEntry",
    "EntryNotFoundError",
    "FileEntry",
    "LabelEntry",
    "LlmMessage",
    "LoadReport",
    "MessageEntry",
    "ModelChangeEntry",
    "ModelRef",
    "OmitEdit",
    "ReplaceEdit",
    "SessionContext",
    "SessionEntry",
    "SessionFileError",
    "SessionHeader",
    "SessionInfo",
    "SessionInfoEntry",
    "SessionManager",
    "SessionProjection",
    "SessionTreeNode",
    "ThinkingLevelChangeEntry",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "build_session_context",
    "calculate_context_tokens",
    "convert_to_llm",
    "default_session_dir",
    "encode_cwd",
    "estimate_context_tokens",
    "estimate_tokens",
    "find_most_recent_session",
    "list_all_sessions",
    "list_sessions",
    "load_entries_from_file",
    "migrate_session_entries",
    "project_path",
    "resolve_session_dir",
]
