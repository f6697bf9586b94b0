"""The session store: conversations as trees of entries in append-only JSONL files.

The file format is byte-compatible with the reference tool's version 3 (see
``docs/session-format.md``); :class:`SessionManager` is the façade the agent uses.
"""

from __future__ import annotations

from knightcode._session.context import LAST_ENTRY, ModelRef, SessionContext, build_session_context
from knightcode._session.errors import EntryNotFoundError, SessionFileError
from knightcode._session.listing import (
    SessionInfo,
    find_most_recent_session,
    list_all_sessions,
    list_sessions,
)
from knightcode._session.loading import (
    LoadReport,
    load_entries_from_file,
    migrate_session_entries,
)
from knightcode._session.location import (
    SESSION_DIR_ENV,
    default_session_dir,
    encode_cwd,
    resolve_session_dir,
)
from knightcode._session.manager import SessionManager
from knightcode._session.messages import convert_to_llm
from knightcode._session.projection import SessionProjection, project_path
from knightcode._session.tokens import (
    ContextUsageEstimate,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
)
from knightcode._session.tree import SessionTreeNode
from knightcode._types.entries import (
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
from knightcode._types.messages import (
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
)

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
