"""Building an Amazon Bedrock Converse request body from a provider-neutral context.

Converse has one message shape for every model Bedrock hosts: ``content`` is a list of
single-key blocks (``text``, ``image``, ``toolUse``, ``toolResult``, ``reasoningContent``).
Model-specific switches go in ``additionalModelRequestFields``: for Claude, thinking is asked for
exactly as on Anthropic's own API (a token budget, or adaptive thinking with an effort), and
prompt-cache points mark the system prompt and the last user turn.
"""

from __future__ import annotations

import re
from typing import NotRequired, TypedDict

from knightcode._llm.anthropic_convert import add_thinking, thinking_enabled
from knightcode._llm.transform import is_same_model, iter_prepared
from knightcode._llm.types import Context, Model, StreamOptions
from knightcode._llm.user_blocks import user_blocks
from knightcode._session.bulk import bulk_allocation
from knightcode._types.messages import (
    AssistantMessage,
    ImageContent,
    ToolResultMessage,
)

__all__ = ["build_bedrock_body", "is_claude"]

_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_CACHE_POINT: dict[str, object] = {"cachePoint": {"type": "default"}}

Block = dict[str, object]
"""One Converse content block (a single-key object)."""


class _Message(TypedDict):
    role: str
    content: list[Block]


class _ToolResult(TypedDict):
    toolUseId: str
    content: list[Block]
    status: str
    name: NotRequired[str]


def is_claude(model: Model) -> bool:
    """Whether ``model`` is an Anthropic model (ids like ``us.anthropic.claude-sonnet-4-…``)."""
    return "claude" in model.id.lower()


def _normalize_id(tool_id: str) -> str:
    # Bedrock requires toolUseId to match [a-zA-Z0-9_-]+ (at most 64 characters).
    return _BAD_ID_CHARS.sub("_", tool_id)[:64]


def _image(block: ImageContent) -> Block:
    image_format = block["mimeType"].split("/", 1)[-1].lower()
    if image_format == "jpg":
        image_format = "jpeg"
    return {"image": {"format": image_format, "source": {"bytes": block["data"]}}}


def _text(text: str) -> Block:
    return {"text": text}


def _assistant(message: AssistantMessage, model: Model) -> _Message | None:
    same = is_same_model(message, model)
    blocks: list[Block] = []
    for block in message["content"]:
        if block["type"] == "text":
            if block["text"].strip():
                blocks.append({"text": block["text"]})
        elif block["type"] == "thinking":
            signature = block.get("thinkingSignature") or ""
            if block.get("redacted"):
                if same and signature:
                    blocks.append({"reasoningContent": {"redactedContent": signature}})
            elif not block["thinking"].strip():
                continue
            elif same and signature and is_claude(model):
                reasoning = {"text": block["thinking"], "signature": signature}
                blocks.append({"reasoningContent": {"reasoningText": reasoning}})
            else:
                blocks.append({"text": block["thinking"]})  # unsigned: plain text, no tags
        elif block["type"] == "toolCall":
            call = {"toolUseId": block["id"], "name": block["name"], "input": block["arguments"]}
            blocks.append({"toolUse": call})
    return {"role": "assistant", "content": blocks} if blocks else None


def _tool_result(message: ToolResultMessage, images: bool) -> Block:
    content: list[Block] = []
    for block in message["content"]:
        if block["type"] == "text":
            content.append({"text": block["text"]})
        elif images:
            content.append(_image(block))
    if not content:
        content.append({"text": ""})
    result: _ToolResult = {
        "toolUseId": message["toolCallId"],
        "content": content,
        "status": "error" if message["isError"] else "success",
    }
    return {"toolResult": result}


def convert_messages(model: Model, context: Context, cache: bool) -> list[_Message]:
    """The ``messages`` array; consecutive tool results share one user message."""
    out: list[_Message] = []
    images = "image" in model.input
    for message in iter_prepared(context.messages, model, _normalize_id):
        if message["role"] == "user":
            blocks = user_blocks(message, images, _text, _image)
            if blocks:
                out.append({"role": "user", "content": blocks})
        elif message["role"] == "assistant":
            assistant = _assistant(message, model)
            if assistant is not None:
                out.append(assistant)
        elif message["role"] == "toolResult":
            block = _tool_result(message, images)
            last = out[-1] if out else None
            if last is not None and last["role"] == "user" and "toolResult" in last["content"][-1]:
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    if cache and out and out[-1]["role"] == "user":
        out[-1]["content"].append(dict(_CACHE_POINT))
    return out


def build_bedrock_body(model: Model, context: Context, options: StreamOptions) -> dict[str, object]:
    """The ``converse-stream`` request body (the model is named in the URL)."""
    cache = is_claude(model) and options.cache_retention != "none"
    with bulk_allocation():
        messages = convert_messages(model, context, cache)
    body: dict[str, object] = {"messages": messages}
    if context.system_prompt:
        system: list[Block] = [{"text": context.system_prompt}]
        if cache:
            system.append(dict(_CACHE_POINT))
        body["system"] = system
    max_tokens = options.max_tokens or model.max_tokens
    inference: dict[str, object] = {}
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    if context.tools:
        body["toolConfig"] = {
            "tools": [
                {
                    "toolSpec": {
                        "name": tool.name,
                        "description": tool.description,
                        "inputSchema": {"json": {"type": "object", **tool.parameters}},
                    }
                }
                for tool in context.tools
            ]
        }
    if is_claude(model) and thinking_enabled(model, options):
        fields: dict[str, object] = {}
        max_tokens = add_thinking(model, options, max_tokens, fields)
        if fields.get("thinking") != {"type": "adaptive"}:  # adaptive interleaves by itself
            fields["anthropic_beta"] = ["interleaved-thinking-2025-05-14"]
        body["additionalModelRequestFields"] = fields
    inference["maxTokens"] = max_tokens
    body["inferenceConfig"] = inference
    return body
