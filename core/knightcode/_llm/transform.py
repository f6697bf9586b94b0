"""Making a conversation acceptable to the model it is sent to.

A session can mix models (``/model`` mid-conversation) and contain turns that never finished.
Before conversion to a wire format the messages are adjusted the way the reference does it:

* failed and aborted assistant turns are left out: they may hold half a tool call, and the model
  should continue from the last good state;
* thinking from *another* model is turned into plain text (its signature would be rejected),
  redacted thinking from another model is dropped;
* tool calls that never got a result (the user interrupted) get a synthetic error result, because
  every API insists that each tool call is answered;
* tool-call ids may be rewritten for APIs with stricter id rules (``normalize_id``).

The input is never modified; changed messages are shallow copies.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

from knightcode._llm.types import Model
from knightcode._types.messages import (
    AssistantContent,
    AssistantMessage,
    LlmMessage,
    ToolCall,
    ToolResultMessage,
)

__all__ = ["is_same_model", "iter_prepared", "prepare_messages"]

NO_RESULT_TEXT = "No result provided"


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    """Whether ``message`` was produced by ``model`` (same provider, API and id)."""
    return (
        message.get("provider") == model.provider
        and message.get("api") == model.api
        and message.get("model") == model.id
    )


def _missing_result(call: ToolCall) -> ToolResultMessage:
    return {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call["name"],
        "content": [{"type": "text", "text": NO_RESULT_TEXT}],
        "isError": True,
        "timestamp": int(time.time() * 1000),
    }


def _adapt_assistant(
    message: AssistantMessage,
    model: Model,
    normalize_id: Callable[[str], str] | None,
    id_map: dict[str, str],
) -> AssistantMessage:
    same = is_same_model(message, model)
    if same and normalize_id is None:
        return message
    content: list[AssistantContent] = []
    changed = False
    for block in message["content"]:
        if block["type"] == "thinking" and not same:
            changed = True
            text = str(block.get("thinking", ""))
            if block.get("redacted") or not text or text.isspace():  # strip() would copy it
                continue
            content.append({"type": "text", "text": block["thinking"]})
        elif block["type"] == "toolCall" and normalize_id is not None:
            new_id = normalize_id(block["id"])
            if new_id != block["id"]:
                id_map[block["id"]] = new_id
                content.append({**block, "id": new_id})
                changed = True
            else:
                content.append(block)
        else:
            content.append(block)
    if not changed:
        return message
    adapted: AssistantMessage = {**message, "content": content}
    return adapted


def _answer_missing(pending: list[ToolCall], answered: set[str]) -> Iterator[ToolResultMessage]:
    for call in pending:
        if call["id"] not in answered:
            yield _missing_result(call)


def iter_prepared(
    messages: Iterable[LlmMessage],
    model: Model,
    normalize_id: Callable[[str], str] | None = None,
) -> Iterator[LlmMessage]:
    """:func:`prepare_messages` one message at a time.

    A client converting as it goes keeps at most one adapted copy alive: a resumed session sends
    ~100 000 messages through here, tens of thousands of them adapted when the model changed.
    """
    id_map: dict[str, str] = {}
    pending: list[ToolCall] = []  # the last assistant's tool calls
    answered: set[str] = set()  # ids of the tool results after it
    provider, api, model_id = model.provider, model.api, model.id

    for message in messages:
        if message["role"] == "toolResult":
            if id_map:
                new_id = id_map.get(message["toolCallId"])
                if new_id is not None:
                    message = {**message, "toolCallId": new_id}
            answered.add(message["toolCallId"])
            yield message
            continue
        if pending:
            yield from _answer_missing(pending, answered)
            pending = []
        answered.clear()
        if message["role"] != "assistant":
            yield message
            continue
        assistant = message
        if assistant.get("stopReason") in ("error", "aborted"):
            continue
        if (
            normalize_id is not None
            or assistant.get("provider") != provider
            or assistant.get("api") != api
            or assistant.get("model") != model_id
        ):
            assistant = _adapt_assistant(assistant, model, normalize_id, id_map)
        for block in assistant["content"]:
            if block["type"] == "toolCall":
                pending.append(block)
        yield assistant
    # Trailing unanswered calls stay unanswered: the agent is about to run them (or the caller
    # is asking about them on purpose); a synthetic result there would be a lie.


def prepare_messages(
    messages: list[LlmMessage],
    model: Model,
    normalize_id: Callable[[str], str] | None = None,
) -> list[LlmMessage]:
    """The messages to convert for ``model`` (see the module docstring)."""
    return list(iter_prepared(messages, model, normalize_id))
