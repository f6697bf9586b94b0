"""Building an Anthropic messages request body from a provider-neutral context.

Thinking blocks keep their signature in ``thinkingSignature`` (the reference's field) and go back
to the API exactly as received; redacted thinking is stored as a thinking block with
``redacted: true`` and its opaque data in ``thinkingSignature``. Prompt caching marks the system
prompt and the last user block with ``cache_control`` unless the request asks for
``cache_retention="none"`` (summarisation requests, whose prompt is never reused).
"""

from __future__ import annotations

import re
from typing import Literal, NotRequired, TypedDict, cast

from knightcode._llm.anthropic_oauth import IDENTITY, is_oauth_token, to_claude_code_name
from knightcode._llm.transform import iter_prepared
from knightcode._llm.types import Context, Model, StreamOptions
from knightcode._session.bulk import bulk_allocation
from knightcode._types.messages import (
    AssistantMessage,
    ImageContent,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["add_thinking", "build_anthropic_body", "thinking_enabled"]

DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
_EFFORT = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "max",
    "max": "max",
}
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_TOKENS_DEFAULT_CAP = 32000

# --- the request's messages, as the messages API spells them ---


class _CacheControl(TypedDict):
    type: Literal["ephemeral"]
    ttl: NotRequired[str]


class _Text(TypedDict):
    type: Literal["text"]
    text: str
    cache_control: NotRequired[_CacheControl]


class _ImageSource(TypedDict):
    type: Literal["base64"]
    media_type: str
    data: str


class _Image(TypedDict):
    type: Literal["image"]
    source: _ImageSource
    cache_control: NotRequired[_CacheControl]


class _ToolResult(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    is_error: bool
    content: str | list[_Text | _Image]
    cache_control: NotRequired[_CacheControl]


class _Thinking(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: str


class _RedactedThinking(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


class _ToolUse(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, object]


_UserBlock = _Text | _Image | _ToolResult
_AssistantBlock = _Text | _Thinking | _RedactedThinking | _ToolUse


class _UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[_UserBlock]


class _AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[_AssistantBlock]


_Message = _UserMessage | _AssistantMessage


def _normalize_id(tool_id: str) -> str:
    # Anthropic requires ^[a-zA-Z0-9_-]+$ and at most 64 characters; other APIs' ids may not be.
    return _BAD_ID_CHARS.sub("_", tool_id)[:64]


def _adaptive(model: Model) -> bool:
    # Opus 4.6 and later decide how much to think; older models take a token budget.
    return "opus-4-6" in model.id or "opus-4.6" in model.id


def thinking_enabled(model: Model, options: StreamOptions) -> bool:
    """Whether this request asks the model to think."""
    return bool(model.reasoning and options.reasoning and options.reasoning != "off")


def _image(block: ImageContent) -> _Image:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]},
    }


def _user(message: UserMessage, images: bool) -> _UserMessage | None:
    content = message["content"]
    if isinstance(content, str):
        return {"role": "user", "content": content} if content.strip() else None
    blocks: list[_UserBlock] = []
    for block in content:
        if block["type"] == "text":
            if block["text"].strip():
                blocks.append({"type": "text", "text": block["text"]})
        elif block["type"] == "image" and images:
            blocks.append(_image(block))
    return {"role": "user", "content": blocks} if blocks else None


def _assistant(message: AssistantMessage) -> _AssistantMessage | None:
    blocks: list[_AssistantBlock] = []
    for block in message["content"]:
        if block["type"] == "text":
            if block["text"].strip():
                blocks.append({"type": "text", "text": block["text"]})
        elif block["type"] == "thinking":
            signature = block.get("thinkingSignature") or ""
            if block.get("redacted"):
                if signature:
                    blocks.append({"type": "redacted_thinking", "data": signature})
            elif not block["thinking"].strip():
                continue
            elif signature.strip():
                blocks.append(
                    {"type": "thinking", "thinking": block["thinking"], "signature": signature}
                )
            else:
                # No signature (an aborted stream): plain text, without tags the model
                # might imitate.
                blocks.append({"type": "text", "text": block["thinking"]})
        elif block["type"] == "toolCall":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": block["arguments"],
                }
            )
    return {"role": "assistant", "content": blocks} if blocks else None


def _tool_result(message: ToolResultMessage, images: bool) -> _ToolResult:
    blocks = message["content"]
    content: str | list[_Text | _Image]
    if not any(b["type"] == "image" for b in blocks) or not images:
        content = "\n".join(b["text"] for b in blocks if b["type"] == "text")
    else:
        parts: list[_Text | _Image] = []
        for block in blocks:
            if block["type"] == "text":
                parts.append({"type": "text", "text": block["text"]})
            else:
                parts.append(_image(block))
        if not any(b["type"] == "text" for b in parts):
            parts.insert(0, {"type": "text", "text": "(see attached image)"})
        content = parts
    return {
        "type": "tool_result",
        "tool_use_id": message["toolCallId"],
        "is_error": message["isError"],
        "content": content,
    }


def convert_messages(
    model: Model, context: Context, cache_control: _CacheControl | None
) -> list[_Message]:
    """The ``messages`` array; consecutive tool results share one user message."""
    out: list[_Message] = []
    images = "image" in model.input
    for message in iter_prepared(context.messages, model, _normalize_id):
        if message["role"] == "user":
            user = _user(message, images)
            if user is not None:
                out.append(user)
        elif message["role"] == "assistant":
            assistant = _assistant(message)
            if assistant is not None:
                out.append(assistant)
        elif message["role"] == "toolResult":
            block = _tool_result(message, images)
            last = out[-1] if out else None
            previous = last["content"] if last is not None and last["role"] == "user" else None
            if (
                previous
                and not isinstance(previous, str)
                and previous[-1].get("type") == "tool_result"
            ):
                previous.append(block)
            else:
                out.append({"role": "user", "content": [block]})
    last = out[-1] if out else None
    if cache_control and last is not None and last["role"] == "user":
        if isinstance(last["content"], str):
            last["content"] = [
                {"type": "text", "text": last["content"], "cache_control": cache_control}
            ]
        elif last["content"]:
            last["content"][-1]["cache_control"] = cache_control
    return out


def add_thinking(
    model: Model, options: StreamOptions, max_tokens: int, body: dict[str, object]
) -> int:
    """Add the thinking parameters; returns the (possibly raised) max_tokens."""
    level = str(options.reasoning)
    if _adaptive(model):
        body["thinking"] = {"type": "adaptive"}
        body["output_config"] = {"effort": _EFFORT.get(level, "high")}
        return max_tokens
    budgets = {**DEFAULT_THINKING_BUDGETS, **(options.thinking_budgets or {})}
    budget = budgets.get(level, budgets["high"])
    # The budget counts against max_tokens: make room for it, within the model's limit.
    max_tokens = min(max_tokens + budget, model.max_tokens)
    if max_tokens <= budget:
        budget = max(1024, max_tokens - 1024)
    body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return max_tokens


def build_anthropic_body(
    model: Model, context: Context, options: StreamOptions
) -> dict[str, object]:
    """The streaming messages request body."""
    cache_control: _CacheControl | None = None
    if options.cache_retention != "none":
        cache_control = {"type": "ephemeral"}
        if options.cache_retention == "long" and "api.anthropic.com" in model.base_url:
            cache_control["ttl"] = "1h"
    max_tokens = options.max_tokens or min(model.max_tokens, _MAX_TOKENS_DEFAULT_CAP)
    with bulk_allocation():  # a resumed session: ~100 000 messages of fresh dicts (see bulk.py)
        messages = convert_messages(model, context, cache_control)
    # A plain JSON object: a before_provider_request hook may change any of its keys.
    body: dict[str, object] = {
        "model": model.id,
        "messages": messages,
        "max_tokens": max_tokens,
        "stream": True,
    }
    # A subscription token must present Claude Code's identity first (anthropic_oauth.py).
    identity = [IDENTITY] if is_oauth_token(options.api_key) else []
    texts = identity + ([context.system_prompt] if context.system_prompt else [])
    if texts:
        blocks: list[_Text] = []
        for text in texts:
            system: _Text = {"type": "text", "text": text}
            if cache_control:
                system["cache_control"] = cache_control
            blocks.append(system)
        body["system"] = blocks
    if context.tools:
        body["tools"] = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": {"type": "object", **tool.parameters},
            }
            for tool in context.tools
        ]
    if identity:
        _claude_code_tool_names(body)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if thinking_enabled(model, options):
        body["max_tokens"] = add_thinking(model, options, max_tokens, body)
    return body


def _claude_code_tool_names(body: dict[str, object]) -> None:
    """Claude Code's casing for its tool names, in the tools and in earlier tool calls."""
    for tool in cast("list[dict[str, str]]", body.get("tools") or []):
        tool["name"] = to_claude_code_name(tool["name"])
    for message in cast("list[_Message]", body["messages"]):
        content = message["content"]
        if message["role"] != "assistant" or isinstance(content, str):
            continue
        for block in content:
            if block["type"] == "tool_use":
                block["name"] = to_claude_code_name(block["name"])
