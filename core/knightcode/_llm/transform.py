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
from typing import Any, cast

from knightcode._llm.types import Model
from knightcode._types.messages import AssistantMessage, LlmMessage, ToolCall, ToolResultMessage

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
    content: list[Any] = []
    changed = False
    for block in message["content"]:
        kind = block.get("type")
        if kind == "thinking" and not same:
            changed = True
            thinking = cast(dict[str, Any], block)
            text = str(thinking.get("thinking", ""))
            if thinking.get("redacted") or not text or text.isspace():  # strip() would copy it
                continue
            content.append({"type": "text", "text": thinking["thinking"]})
        elif kind == "toolCall" and normalize_id is not None:
            call = cast(ToolCall, block)
            new_id = normalize_id(call["id"])
            if new_id != call["id"]:
                id_map[call["id"]] = new_id
                content.append({**call, "id": new_id})
                changed = True
            else:
                content.append(call)
        else:
            content.append(block)
    if not changed:
        return message
    return cast(AssistantMessage, {**message, "content": content})


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
        role = message["role"]
        if role == "toolResult":
            tool_result = cast(ToolResultMessage, message)
            if id_map:
                new_id = id_map.get(tool_result["toolCallId"])
                if new_id is not None:
                    tool_result = {**tool_result, "toolCallId": new_id}
            answered.add(tool_result["toolCallId"])
            yield tool_result
            continue
        if pending:
            yield from _answer_missing(pending, answered)
            pending = []
        answered.clear()
        if role != "assistant":
            yield message
            continue
        assistant = cast(AssistantMessage, message)
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
            if block.get("type") == "toolCall":
                pending.append(cast(ToolCall, block))
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
