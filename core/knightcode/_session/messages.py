"""Messages as stored in session files, and their conversion to provider messages.

Messages are plain JSON objects (``TypedDict`` shapes here) so a loaded session keeps the exact
dicts it read: no per-entry objects on the load path. Field names are the reference's camelCase.

Roles ``user``, ``assistant`` and ``toolResult`` go to the provider unchanged; the agent's own roles
(``bashExecution``, ``custom``, ``branchSummary``, ``compactionSummary``) become user messages
rendered byte for byte like the reference tool, so a context built here equals the reference's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from knightcode._session.ids import iso_to_epoch_ms
from knightcode._types.messages import (
    AgentMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    LlmMessage,
    TextContent,
    UserMessage,
)

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "bash_execution_to_text",
    "content_text",
    "convert_to_llm",
    "create_branch_summary_message",
    "create_compaction_summary_message",
    "create_custom_message",
]

# Exact texts of the reference (messages.ts); note the asymmetric suffixes.
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"


def content_text(content: str | Sequence[Mapping[str, object]] | None) -> str:
    """The text of a message's content: a string as it is, else its text blocks joined (images,
    thinking and tool calls contribute nothing).
    """
    if isinstance(content, str):
        return content
    return "".join(
        text
        for block in content or ()
        if block.get("type") == "text" and isinstance(text := block.get("text"), str)
    )


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
    details: object,
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
