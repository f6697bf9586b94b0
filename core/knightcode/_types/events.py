"""Events of a running session, as subscribers (the JSON and RPC writers, the UI, tests) get them.

The turn loop emits the :data:`AgentEvent` kinds; the session adds the rest of
:data:`SessionEvent` (settling, queues, retries, compaction, plugin actions). Field names are the
reference's camelCase, so a record on the JSON stream is the event itself (``message_update``
excepted: the wire form carries only the delta, see ``docs/json.md``).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from knightcode._types.entries import SessionEntry
from knightcode._types.messages import (
    AgentMessage,
    AssistantMessage,
    ThinkingLevel,
    ToolResult,
    ToolResultMessage,
    Usage,
)
from knightcode._types.stream import AssistantMessageEvent

__all__ = [
    "AgentEndEvent",
    "AgentEvent",
    "AgentSettledEvent",
    "AgentStartEvent",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "CompactionEndEvent",
    "CompactionReason",
    "CompactionResult",
    "CompactionStartEvent",
    "EntryAppendedEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "QueueUpdateEvent",
    "SessionEvent",
    "SessionInfoChangedEvent",
    "SummarizationRetryAttemptStartEvent",
    "SummarizationRetryFinishedEvent",
    "SummarizationRetryScheduledEvent",
    "ThinkingLevelChangedEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
]

CompactionReason = Literal["manual", "threshold", "overflow"]
"""Why a compaction runs: ``/compact``, the context crossed the threshold, or the provider
reported an overflow."""

# --- the turn loop ---


class AgentStartEvent(TypedDict):
    """A low-level run started (a prompt, a retry or a queued follow-up)."""

    type: Literal["agent_start"]


class AgentEndEvent(TypedDict):
    """That run ended; ``messages`` are the messages it produced."""

    type: Literal["agent_end"]
    messages: list[AgentMessage]
    willRetry: NotRequired[bool]


class TurnStartEvent(TypedDict):
    """One assistant response (and the tool calls it makes) started."""

    type: Literal["turn_start"]


class TurnEndEvent(TypedDict):
    """The assistant response of the turn is complete and its tools have run."""

    type: Literal["turn_end"]
    message: AssistantMessage
    toolResults: list[ToolResultMessage]


class MessageStartEvent(TypedDict):
    """A message started (an assistant message is still empty)."""

    type: Literal["message_start"]
    message: AgentMessage


class MessageUpdateEvent(TypedDict):
    """A streamed update of the assistant message; ``message`` is the message so far."""

    type: Literal["message_update"]
    message: AssistantMessage
    assistantMessageEvent: AssistantMessageEvent


class MessageEndEvent(TypedDict):
    """A message is complete: the authoritative final message."""

    type: Literal["message_end"]
    message: AgentMessage


class ToolExecutionStartEvent(TypedDict):
    """A tool call is about to run. ``parentToolCallId`` is set on a *nested* call, one that a
    running tool made through ``ToolContext.call_tool`` (its id is ``<parent>.<n>``); nested
    calls have no ``toolResult`` message of their own.
    """

    type: Literal["tool_execution_start"]
    toolCallId: str
    toolName: str
    args: dict[str, object]
    parentToolCallId: NotRequired[str]


class ToolExecutionUpdateEvent(TypedDict):
    type: Literal["tool_execution_update"]
    toolCallId: str
    toolName: str
    args: dict[str, object]
    partialResult: ToolResult
    parentToolCallId: NotRequired[str]


class ToolExecutionEndEvent(TypedDict):
    """``durationMs`` is how long ``execute`` ran (absent when the tool did not run)."""

    type: Literal["tool_execution_end"]
    toolCallId: str
    toolName: str
    result: ToolResult
    isError: bool
    durationMs: NotRequired[float]
    parentToolCallId: NotRequired[str]


AgentEvent = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)
"""What the turn loop emits."""

# --- the session ---


class AgentSettledEvent(TypedDict):
    """No automatic work (retry, recovery, queued messages) remains."""

    type: Literal["agent_settled"]
    aborted: bool


class QueueUpdateEvent(TypedDict):
    """The steering or follow-up queue changed; both lists are complete."""

    type: Literal["queue_update"]
    steering: list[str]
    followUp: list[str]


class EntryAppendedEvent(TypedDict):
    """A plugin stored state as a ``custom`` entry."""

    type: Literal["entry_appended"]
    entry: SessionEntry


class SessionInfoChangedEvent(TypedDict):
    """The session's name changed (absent ``name``: cleared)."""

    type: Literal["session_info_changed"]
    name: NotRequired[str]


class ThinkingLevelChangedEvent(TypedDict):
    type: Literal["thinking_level_changed"]
    level: ThinkingLevel


class AutoRetryStartEvent(TypedDict):
    """A failed request will be retried after ``delayMs``."""

    type: Literal["auto_retry_start"]
    attempt: int
    maxAttempts: int
    delayMs: int
    errorMessage: str


class AutoRetryEndEvent(TypedDict):
    """The retries ended: the last attempt succeeded, or ``finalError`` says why not."""

    type: Literal["auto_retry_end"]
    success: bool
    attempt: int
    finalError: NotRequired[str]


class CompactionResult(TypedDict):
    """A successful compaction, as ``compaction_end`` and RPC ``compact`` report it."""

    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    estimatedTokensAfter: int
    usage: NotRequired[Usage]
    details: NotRequired[object]


class CompactionStartEvent(TypedDict):
    type: Literal["compaction_start"]
    reason: CompactionReason


class CompactionEndEvent(TypedDict):
    """``result`` on success; ``aborted`` when cancelled; ``errorMessage`` when it failed."""

    type: Literal["compaction_end"]
    reason: CompactionReason
    aborted: bool
    willRetry: bool
    result: NotRequired[CompactionResult]
    errorMessage: NotRequired[str]


class SummarizationRetryScheduledEvent(TypedDict):
    type: Literal["summarization_retry_scheduled"]
    attempt: int
    maxAttempts: int
    delayMs: int
    errorMessage: str


class SummarizationRetryAttemptStartEvent(TypedDict):
    type: Literal["summarization_retry_attempt_start"]
    source: Literal["compaction", "branchSummary"]
    reason: NotRequired[CompactionReason]


class SummarizationRetryFinishedEvent(TypedDict):
    type: Literal["summarization_retry_finished"]


SessionEvent = (
    AgentEvent
    | AgentSettledEvent
    | QueueUpdateEvent
    | EntryAppendedEvent
    | SessionInfoChangedEvent
    | ThinkingLevelChangedEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | SummarizationRetryScheduledEvent
    | SummarizationRetryAttemptStartEvent
    | SummarizationRetryFinishedEvent
)
"""Every event a session's subscribers receive."""
