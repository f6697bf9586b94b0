"""Building an OpenAI Responses API request body (``POST /responses``) from a neutral context.

The Responses API takes a flat list of *input items* instead of chat messages: user and system
messages, the assistant's output ``message`` items, ``reasoning`` items, ``function_call`` items
and ``function_call_output`` items. What makes it worth having besides chat completions is the
reasoning: with ``store: false`` OpenAI keeps nothing, so the model's reasoning is asked for in
encrypted form (``include: ["reasoning.encrypted_content"]``), kept in the assistant message as
the thinking block's signature (the whole reasoning item as JSON, as the reference stores it) and
sent back verbatim on the next request, which lets the chain of thought carry across turns.

Tool-call ids are ``call_id|item_id`` (the reference's form): the ``call_id`` pairs a call with
its output, the ``item_id`` (``fc_…``) pairs the call with the reasoning item before it.
"""

from __future__ import annotations

import hashlib
import json
import re

from knightcode._llm.transform import is_same_model, iter_prepared
from knightcode._llm.types import Context, Model, StreamOptions
from knightcode._session.jsonl import dumps as js_dumps
from knightcode._types.messages import (
    AssistantMessage,
    ImageContent,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["build_responses_body", "normalize_call_id", "text_signature"]

Item = dict[str, object]
"""One input item of the request (a JSON object)."""

# A thinking level is sent as the effort of the same name, except the levels few models take
# (models.json thinkingLevelMap sends them where they exist: {"xhigh": "xhigh"}).
_CLAMPED = {"xhigh": "high", "max": "high"}
_MAX_TOKENS_CAP = 32000  # the reference's default output limit when none is asked for
_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_ID_LIMIT = 64  # OpenAI rejects longer item and call ids


def _id_part(part: str) -> str:
    return _ID_UNSAFE.sub("_", part)[:_ID_LIMIT].rstrip("_")


def normalize_call_id(tool_id: str) -> str:
    """A tool-call id the API accepts: safe characters, at most 64 of them, no trailing
    underscore; in a ``call_id|item_id`` id, each part so and an item id that starts with ``fc``.
    """
    if "|" not in tool_id:
        return _id_part(tool_id) or tool_id
    call_id, item_id = tool_id.split("|", 1)
    item_id = _ID_UNSAFE.sub("_", item_id)
    if not item_id.startswith("fc"):
        item_id = "fc_" + item_id
    return f"{_id_part(call_id)}|{_id_part(item_id)}"


def _image(block: ImageContent) -> Item:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{block['mimeType']};base64,{block['data']}",
    }


def _user(message: UserMessage, images: bool) -> Item | None:
    content = message["content"]
    if isinstance(content, str):
        return {"role": "user", "content": [{"type": "input_text", "text": content}]}
    parts: list[Item] = []
    for block in content:
        if block["type"] == "text":
            parts.append({"type": "input_text", "text": block["text"]})
        elif block["type"] == "image" and images:
            parts.append(_image(block))
    return {"role": "user", "content": parts} if parts else None


def text_signature(item_id: str, phase: object) -> str:
    """The text block's signature for an output message: the reference's v1 form, JSON with
    the message's id and, when the API gave one, its ``phase``.
    """
    payload: dict[str, object] = {"v": 1, "id": item_id}
    if phase in ("commentary", "final_answer"):
        payload["phase"] = phase
    return json.dumps(payload, separators=(",", ":"))


def _message_fields(signature: str | None, index: int) -> Item:
    """The ``id`` (and ``phase``) of an output message item from its text signature.

    The API pairs an output message with the reasoning before it by id, so the id received is
    sent back; a stable made-up one stands in when there is none. The reference's older
    sessions hold the bare id instead of the v1 JSON.
    """
    fields: Item = {}
    message_id = signature or ""
    if message_id.startswith("{"):
        try:
            parsed = json.loads(message_id)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            message_id = parsed["id"]
            if parsed.get("phase") in ("commentary", "final_answer"):
                fields["phase"] = parsed["phase"]
    if not message_id:
        message_id = f"msg_{index}"
    elif len(message_id) > _ID_LIMIT:
        message_id = "msg_" + hashlib.sha256(message_id.encode("utf-8")).hexdigest()[:24]
    fields["id"] = message_id
    return fields


def _reasoning_item(signature: str | None) -> Item | None:
    """The reasoning item a thinking block's signature holds, or None when it holds none."""
    if not signature or not signature.startswith("{"):
        return None
    try:
        item = json.loads(signature)
    except ValueError:
        return None
    if isinstance(item, dict) and item.get("type") == "reasoning":
        return item
    return None


def _assistant(message: AssistantMessage, model: Model, index: int) -> list[Item]:
    items: list[Item] = []
    # The item ids of another model's calls (e.g. gpt-5 after gpt-5-mini, or another provider
    # that speaks this API) were paired with reasoning items this request does not carry, which
    # the API rejects; so are those of a turn whose reasoning cannot be sent back. The call id
    # alone pairs a call with its output.
    keep_item_ids = is_same_model(message, model)
    for block in message["content"]:
        if block["type"] == "thinking":
            item = _reasoning_item(block.get("thinkingSignature"))
            if item is not None:
                items.append(item)
            else:
                keep_item_ids = False
        elif block["type"] == "text":
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
                    "status": "completed",
                    **_message_fields(block.get("textSignature"), index),
                }
            )
        elif block["type"] == "toolCall":
            call_id, _, item_id = block["id"].partition("|")
            call: Item = {"type": "function_call", "call_id": call_id}
            if item_id and keep_item_ids:
                call["id"] = item_id
            call["name"] = block["name"]
            call["arguments"] = js_dumps(block["arguments"])
            items.append(call)
    return items


def _tool_result(message: ToolResultMessage, images: bool) -> list[Item]:
    text = "\n".join(block["text"] for block in message["content"] if block["type"] == "text")
    image_blocks = [block for block in message["content"] if block["type"] == "image"]
    call_id = message["toolCallId"].partition("|")[0]
    out: list[Item] = [
        {
            "type": "function_call_output",
            "call_id": call_id,
            "output": text or "(see attached image)",
        }
    ]
    if image_blocks and images:
        # A function_call_output carries text only; the images follow as a user message.
        parts: list[Item] = [{"type": "input_text", "text": "Attached image(s) from tool result:"}]
        parts.extend(_image(block) for block in image_blocks)
        out.append({"role": "user", "content": parts})
    return out


def convert_input(model: Model, context: Context) -> list[Item]:
    """The ``input`` items for ``context``."""
    items: list[Item] = []
    if context.system_prompt:
        role = "developer" if model.reasoning else "system"
        items.append({"role": role, "content": context.system_prompt})
    images = "image" in model.input
    for index, message in enumerate(iter_prepared(context.messages, model, normalize_call_id)):
        if message["role"] == "user":
            user = _user(message, images)
            if user is not None:
                items.append(user)
        elif message["role"] == "assistant":
            items.extend(_assistant(message, model, index))
        elif message["role"] == "toolResult":
            items.extend(_tool_result(message, images))
    return items


def build_responses_body(
    model: Model, context: Context, options: StreamOptions, *, model_name: str | None = None
) -> dict[str, object]:
    """The streaming Responses request body.

    :param model_name: the ``model`` field when it differs from the model's id (an Azure
        deployment name)
    """
    items = convert_input(model, context)
    body: dict[str, object] = {
        "model": model_name or model.id,
        "input": items,
        "stream": True,
        "store": False,
        "max_output_tokens": options.max_tokens or min(model.max_tokens, _MAX_TOKENS_CAP),
    }
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.cache_retention == "long" and model.compat.get("supportsLongCacheRetention", True):
        body["prompt_cache_retention"] = "24h"  # OpenAI keeps the prompt cache for a day
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
                "strict": False,
            }
            for tool in context.tools
        ]
    _add_reasoning(body, items, model, options.reasoning)
    extra = model.compat.get("extraBody")
    if isinstance(extra, dict):
        body.update(extra)  # models.json compat.extraBody, as for chat completions
    return body


def _add_reasoning(
    body: dict[str, object], items: list[Item], model: Model, level: str | None
) -> None:
    """``reasoning: {effort, summary}`` and the encrypted reasoning, for a reasoning model."""
    if not model.reasoning:
        return
    if level and level != "off":
        effort = model.thinking_level_map.get(level, _CLAMPED.get(level, level))
    else:
        effort = model.thinking_level_map.get("off")  # a model that can be told "none"
        if effort is None:
            if model.name.lower().startswith("gpt-5") or model.id.startswith("gpt-5"):
                # GPT-5 has no way to switch reasoning off; the reference asks it to use none
                # with this developer message, which OpenAI staff suggested.
                items.append(
                    {
                        "role": "developer",
                        "content": [{"type": "input_text", "text": "# Juice: 0 !important"}],
                    }
                )
            return
    if effort is None:
        return
    body["reasoning"] = {"effort": effort, "summary": "auto"}
    body["include"] = ["reasoning.encrypted_content"]
