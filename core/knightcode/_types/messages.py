"""Messages and content blocks: the shapes stored in session files and sent to providers.

Messages are plain JSON objects, so a loaded session keeps the exact dicts it read (no object per
entry on the load path); these ``TypedDict`` shapes tell the type checker, and plugin authors,
which camelCase keys each kind carries. Optional fields are ``NotRequired``: absent, never
``null``.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

__all__ = [
    "THINKING_CYCLE",
    "THINKING_LEVELS",
    "AgentMessage",
    "AssistantContent",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "ContentBlock",
    "Cost",
    "CustomMessage",
    "ImageContent",
    "LlmMessage",
    "StopReason",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "ToolCall",
    "ToolResult",
    "ToolResultContent",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
    "thinking_level_of",
]


class TextContent(TypedDict):
    """Text. ``textSignature`` is the provider's id for it (the OpenAI Responses API's output
    message id, sent back so the reasoning before it stays paired).
    """

    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str  # base64
    mimeType: str


class ThinkingContent(TypedDict):
    """Model reasoning. ``thinkingSignature`` is the provider's opaque token that has to go back
    with the reasoning on the next request; ``redacted`` marks reasoning the provider encrypted
    (the signature then holds it).
    """

    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]
    redacted: NotRequired[bool]


class ToolCall(TypedDict):
    """A tool call; ``thoughtSignature`` is Gemini's encrypted reasoning attached to the call,
    sent back with it on the next request.
    """

    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, object]
    thoughtSignature: NotRequired[str]


ContentBlock = TextContent | ImageContent | ThinkingContent | ToolCall


class Cost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float


class Usage(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: int
    cost: NotRequired[Cost]


UserContent = TextContent | ImageContent
"""A content block a user message (or a tool result, or a plugin message) may hold."""
AssistantContent = TextContent | ThinkingContent | ToolCall
"""A content block of an assistant message."""
ToolResultContent = TextContent | ImageContent
"""A content block of a tool result."""
StopReason = Literal["stop", "length", "toolUse", "error", "aborted", "pending"]
"""Why an assistant message ended; ``"pending"`` only while it streams."""


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[UserContent]
    timestamp: int  # epoch ms


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[AssistantContent]
    api: str
    provider: str
    model: str
    usage: Usage
    # "pending" only while streaming: a stored message always has its final reason.
    stopReason: StopReason
    timestamp: int
    errorMessage: NotRequired[str]
    responseId: NotRequired[str]


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[ToolResultContent]
    isError: bool
    timestamp: int
    details: NotRequired[object]


class BashExecutionMessage(TypedDict):
    """A command the user ran with ``!`` (``!!``: kept out of the model's context)."""

    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    timestamp: int
    fullOutputPath: NotRequired[str]
    excludeFromContext: NotRequired[bool]


class CustomMessage(TypedDict):
    """A message a plugin injected; ``display`` says whether the UI shows it."""

    role: Literal["custom"]
    customType: str
    content: str | list[UserContent]
    display: bool
    timestamp: int
    details: NotRequired[object]


class BranchSummaryMessage(TypedDict):
    role: Literal["branchSummary"]
    summary: str
    fromId: str
    timestamp: int


class CompactionSummaryMessage(TypedDict):
    role: Literal["compactionSummary"]
    summary: str
    tokensBefore: int
    timestamp: int


AgentMessage = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
)
"""Everything a ``message`` entry (or the context builder) can hold."""

LlmMessage = UserMessage | AssistantMessage | ToolResultMessage
"""What a provider is sent."""


class ToolResult(TypedDict):
    """What a tool's ``execute`` returns (and reports as partial results): content blocks for the
    model, and tool-specific ``details`` for displays and plugins (never sent to the model).
    """

    content: list[ToolResultContent]
    details: NotRequired[object]


ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
"""How much a reasoning model thinks before it answers (``off`` … ``xhigh``; ``max`` where a
provider has it)."""

THINKING_LEVELS: tuple[ThinkingLevel, ...] = (
    "off",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
)


THINKING_CYCLE: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high")
"""The levels ``shift+tab`` and RPC ``cycle_thinking_level`` step through."""


def thinking_level_of(value: object) -> ThinkingLevel | None:
    """``value`` as a thinking level, or None when it is not one (a session file written by
    another tool may hold anything).
    """
    for level in THINKING_LEVELS:
        if value == level:
            return level
    return None
