"""Messages as stored in session files, and their conversion to provider messages.

Messages are plain JSON objects (``TypedDict`` shapes here) so a loaded session keeps the exact
dicts it read: no per-entry objects on the load path. Field names are the reference's camelCase.

Roles ``user``, ``assistant`` and ``toolResult`` go to the provider unchanged; the agent's own roles
(``bashExecution``, ``custom``, ``branchSummary``, ``compactionSummary``) become user messages
rendered byte for byte like the reference tool, so a context built here equals the reference's.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, cast

from knightcode._session.ids import iso_to_epoch_ms

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "AgentMessage",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "ContentBlock",
    "Cost",
    "CustomMessage",
    "ImageContent",
    "LlmMessage",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "bash_execution_to_text",
    "convert_to_llm",
    "create_branch_summary_message",
    "create_compaction_summary_message",
    "create_custom_message",
]

# Exact texts of the reference (messages.ts); note the asymmetric suffixes.
COMPACTION_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"


class TextContent(TypedDict):
    type: Literal["text"]
    text: str


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str  # base64
    mimeType: str


class ThinkingContent(TypedDict):
    """Model reasoning; providers may add signature fields, which are kept as stored."""

    type: Literal["thinking"]
    thinking: str


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]


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


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[TextContent | ImageContent]
    timestamp: int  # epoch ms


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[TextContent | ThinkingContent | ToolCall]
    api: str
    provider: str
    model: str
    usage: Usage
    # "pending" only while streaming: a stored message always has its final reason.
    stopReason: Literal["stop", "length", "toolUse", "error", "aborted", "pending"]
    timestamp: int
    errorMessage: NotRequired[str]
    responseId: NotRequired[str]


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[TextContent | ImageContent]
    isError: bool
    timestamp: int
    details: NotRequired[Any]


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
    content: str | list[TextContent | ImageContent]
    display: bool
    timestamp: int
    details: NotRequired[Any]


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


def _epoch_ms(iso: str) -> int:
    # JavaScript yields NaN for an unparsable timestamp; 0 keeps the field an integer.
    parsed = iso_to_epoch_ms(iso)
    return parsed if parsed is not None else 0


def create_branch_summary_message(
    summary: str, from_id: str, timestamp: str
) -> BranchSummaryMessage:
    """The message a ``branch_summary`` entry contributes to the context."""
    return {
        "role": "branchSummary",
        "summary": summary,
        "fromId": from_id,
        "timestamp": _epoch_ms(timestamp),
    }


def create_compaction_summary_message(
    summary: str, tokens_before: int, timestamp: str
) -> CompactionSummaryMessage:
    """The message a ``compaction`` entry contributes to the context (always first)."""
    return {
        "role": "compactionSummary",
        "summary": summary,
        "tokensBefore": tokens_before,
        "timestamp": _epoch_ms(timestamp),
    }


def create_custom_message(
    custom_type: str,
    content: str | list[TextContent | ImageContent],
    display: bool,
    details: Any,
    timestamp: str,
) -> CustomMessage:
    """The message a ``custom_message`` entry contributes (``details`` omitted when absent)."""
    message: CustomMessage = {
        "role": "custom",
        "customType": custom_type,
        "content": content,
        "display": display,
        "timestamp": _epoch_ms(timestamp),
    }
    if details is not None:
        message["details"] = details
    return message


def bash_execution_to_text(message: BashExecutionMessage) -> str:
    """Render a ``!`` command and its output as the user text the model sees."""
    text = f"Ran `{message['command']}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    full_output = message.get("fullOutputPath")
    if message.get("truncated") and full_output:
        text += f"\n\n[Output truncated. Full output: {full_output}]"
    return text


def _user(content: list[TextContent | ImageContent], timestamp: int) -> UserMessage:
    return {"role": "user", "content": content, "timestamp": timestamp}


_PROVIDER_ROLES = frozenset({"user", "assistant", "toolResult"})


def convert_to_llm(messages: list[AgentMessage]) -> list[LlmMessage]:
    """Map agent messages to provider messages, dropping ``!!`` commands and unknown roles."""
    result: list[LlmMessage] = []
    append = result.append
    provider_roles = _PROVIDER_ROLES
    for message in messages:
        role = message["role"]
        if role in provider_roles:  # the bulk of a session: passed on as they are
            append(cast(LlmMessage, message))
        elif message["role"] == "bashExecution":
            if not message.get("excludeFromContext"):
                text = bash_execution_to_text(message)
                append(_user([{"type": "text", "text": text}], message["timestamp"]))
        elif message["role"] == "custom":
            content = message["content"]
            blocks: list[TextContent | ImageContent] = (
                [{"type": "text", "text": content}] if isinstance(content, str) else content
            )
            append(_user(blocks, message["timestamp"]))
        elif message["role"] == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + message["summary"] + BRANCH_SUMMARY_SUFFIX
            append(_user([{"type": "text", "text": text}], message["timestamp"]))
        elif message["role"] == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + message["summary"] + COMPACTION_SUMMARY_SUFFIX
            append(_user([{"type": "text", "text": text}], message["timestamp"]))
    return result
