"""Building an OpenAI chat-completions request body from a provider-neutral context.

Endpoints that speak "OpenAI-compatible" differ in small ways; the differences are switches in
``model.compat`` (the same names as the reference's models.json ``compat``), with defaults guessed
from the base URL:

* ``maxTokensField``: ``"max_completion_tokens"`` for api.openai.com (its reasoning models reject
  ``max_tokens``), ``"max_tokens"`` elsewhere (llama.cpp, vLLM, Groq, Mistral … all accept it);
* ``supportsDeveloperRole``: send the system prompt as ``developer`` to OpenAI reasoning models;
* ``supportsReasoningEffort`` / ``thinkingFormat``: how a thinking level is requested
  (``reasoning_effort``, or OpenRouter's ``reasoning: {effort}``);
* ``supportsUsageInStreaming``: ask for ``stream_options.include_usage``;
* ``supportsStore``: send ``store: false`` (OpenAI keeps completions otherwise);
* ``requiresToolResultName`` / ``requiresMistralToolIds``: Mistral's rules for tool messages;
* ``thinkingFormat`` ``"zai"`` / ``"qwen"``: thinking switched by ``enable_thinking``;
  ``"deepseek"``: ``thinking: {type: enabled|disabled}`` plus ``reasoning_effort``;
* ``requiresReasoningContentOnAssistantMessages``: DeepSeek wants ``reasoning_content`` (empty
  when there is none) on every assistant message of a reasoning model;
* ``zaiToolStream``: ask zai to stream tool-call arguments (``tool_stream``);
* ``openRouterRouting`` / ``vercelGatewayRouting``: provider-routing preferences, sent as given;
* ``extraBody``: fields merged into the request body last.

Other keys the reference knows are accepted and ignored; models.json loading names them once
(:data:`COMPAT_KEYS`).
"""

from __future__ import annotations

import re
from typing import Literal, NotRequired, TypedDict

from knightcode._llm.compat_keys import COMPAT_KEYS
from knightcode._llm.transform import is_same_model, iter_prepared
from knightcode._llm.types import Context, Model, StreamOptions
from knightcode._session.bulk import bulk_allocation
from knightcode._session.jsonl import dumps as js_dumps
from knightcode._types.messages import (
    AssistantMessage,
    ImageContent,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["COMPAT_KEYS", "build_openai_body", "resolve_compat"]


_EFFORT = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_NON_ID = re.compile(r"[^a-zA-Z0-9_-]")

# --- the request's messages, as the chat-completions API spells them ---


class _ImageUrl(TypedDict):
    url: str


class _ImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: _ImageUrl


class _TextPart(TypedDict):
    type: Literal["text"]
    text: str


class _Function(TypedDict):
    name: str
    arguments: str  # JSON text


class _ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: _Function


class _SystemMessage(TypedDict):
    role: Literal["system", "developer"]
    content: str


class _UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[_TextPart | _ImagePart]


class _AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: str | None
    # Reasoning goes back in the field it came in (see _assistant).
    reasoning_content: NotRequired[str]
    reasoning: NotRequired[str]
    tool_calls: NotRequired[list[_ToolCall]]


class _ToolMessage(TypedDict):
    role: Literal["tool"]
    content: str
    tool_call_id: str
    name: NotRequired[str]


_Message = _SystemMessage | _UserMessage | _AssistantMessage | _ToolMessage


def resolve_compat(model: Model) -> dict[str, object]:
    """The compatibility switches of ``model``: explicit ``compat`` over URL-based defaults.

    The values are what models.json holds (any JSON value), so the switches are read by their
    truth value.
    """
    url = model.base_url
    is_openai = "api.openai.com" in url
    is_mistral = "mistral.ai" in url
    compat: dict[str, object] = {
        "maxTokensField": "max_completion_tokens" if is_openai else "max_tokens",
        "supportsDeveloperRole": is_openai,
        "supportsReasoningEffort": "api.x.ai" not in url,
        "supportsUsageInStreaming": True,
        "supportsStore": is_openai,
        "thinkingFormat": "openrouter" if "openrouter.ai" in url else "openai",
        "requiresToolResultName": is_mistral,
        "requiresMistralToolIds": is_mistral,
    }
    compat.update(model.compat)
    return compat


def _call_id(tool_id: str, compat: dict[str, object]) -> str:
    """A tool-call id this API accepts (the call and its result get the same one)."""
    if "|" in tool_id:
        # The Responses API's "call_id|item_id": the call id alone, at most 40 characters
        # (OpenAI's limit; the item id can be hundreds of characters).
        tool_id = _NON_ID.sub("_", tool_id.partition("|")[0])[:40]
    return _mistral_id(tool_id) if compat["requiresMistralToolIds"] else tool_id


def _mistral_id(tool_id: str) -> str:
    # Mistral accepts only ids of exactly 9 letters and digits; pad deterministically so a
    # call and its result still match.
    cleaned = _NON_ALNUM.sub("", tool_id)
    return (cleaned + "ABCDEFGHI")[:9]


def _image_url(block: ImageContent) -> _ImagePart:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"},
    }


def _user(message: UserMessage, images: bool) -> _UserMessage | None:
    content = message["content"]
    if isinstance(content, str):
        return {"role": "user", "content": content}
    parts: list[_TextPart | _ImagePart] = []
    for block in content:
        if block["type"] == "text":
            parts.append({"type": "text", "text": block["text"]})
        elif block["type"] == "image" and images:
            parts.append(_image_url(block))
    return {"role": "user", "content": parts} if parts else None


def _assistant(
    message: AssistantMessage, model: Model, compat: dict[str, object]
) -> _AssistantMessage | None:
    texts: list[str] = []
    reasoning: dict[str, list[str]] | None = None
    calls: list[_ToolCall] | None = None
    same: bool | None = None  # whether model produced the message; computed at the first thinking
    for block in message["content"]:
        if block["type"] == "text":
            if block["text"]:
                texts.append(block["text"])
        elif block["type"] == "thinking":
            # Thinking is sent back only to the model that produced it, in the field it came in
            # (llama.cpp serving gpt-oss needs its reasoning_content to continue a tool call).
            if same is None:
                same = is_same_model(message, model)
            field = block.get("thinkingSignature")
            if same and field in ("reasoning_content", "reasoning"):
                if reasoning is None:
                    reasoning = {}
                reasoning.setdefault(field, []).append(block["thinking"])
        elif block["type"] == "toolCall":
            call_id = _call_id(block["id"], compat)
            if calls is None:
                calls = []
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": block["name"],
                        # JSON.stringify(arguments), as the reference re-sends them: compact,
                        # raw Unicode, JavaScript's numbers — the bytes a model's own compact
                        # arguments arrived as, where Python's spacing would differ.
                        "arguments": js_dumps(block["arguments"]),
                    },
                }
            )
    if not texts and not calls:
        return None  # an empty assistant message is rejected by most servers
    # A plain string is what every OpenAI-compatible server accepts for assistant content.
    out: _AssistantMessage = {"role": "assistant", "content": "".join(texts) if texts else None}
    if reasoning:
        for field, chunks in reasoning.items():  # in the order the fields first came
            if field == "reasoning_content":
                out["reasoning_content"] = "\n".join(chunks)
            else:
                out["reasoning"] = "\n".join(chunks)
    if calls:
        out["tool_calls"] = calls
    if (
        model.reasoning
        and compat.get("requiresReasoningContentOnAssistantMessages")
        and "reasoning_content" not in out
    ):
        out["reasoning_content"] = ""
    return out


def _tool_results(
    message: ToolResultMessage, images: bool, compat: dict[str, object]
) -> list[_ToolMessage | _UserMessage]:
    content = message["content"]
    first = content[0] if len(content) == 1 else None
    if first is not None and first["type"] == "text":  # the usual shape: one text block
        text = first["text"]
        image_blocks: list[ImageContent] = []
    else:
        text = "\n".join(block["text"] for block in content if block["type"] == "text")
        image_blocks = [block for block in content if block["type"] == "image"]
    if not text and image_blocks:
        text = (
            "(see attached image)"
            if images
            else "(image omitted: this model does not accept images)"
        )
    call_id = message["toolCallId"]
    tool: _ToolMessage = {
        "role": "tool",
        "content": text,
        "tool_call_id": _call_id(call_id, compat),
    }
    if compat["requiresToolResultName"]:
        tool["name"] = message["toolName"]
    out: list[_ToolMessage | _UserMessage] = [tool]
    if image_blocks and images:
        # Tool messages cannot carry images; the reference follows up with a user message.
        parts: list[_TextPart | _ImagePart] = [
            {"type": "text", "text": "Attached image(s) from tool result:"}
        ]
        parts.extend(_image_url(block) for block in image_blocks)
        out.append({"role": "user", "content": parts})
    return out


def convert_messages(model: Model, context: Context, compat: dict[str, object]) -> list[_Message]:
    """The ``messages`` array for ``context``."""
    out: list[_Message] = []
    if context.system_prompt:
        developer = model.reasoning and compat["supportsDeveloperRole"]
        out.append(
            {"role": "developer" if developer else "system", "content": context.system_prompt}
        )
    images = "image" in model.input
    for message in iter_prepared(context.messages, model):
        if message["role"] == "user":
            user = _user(message, images)
            if user is not None:
                out.append(user)
        elif message["role"] == "assistant":
            assistant = _assistant(message, model, compat)
            if assistant is not None:
                out.append(assistant)
        elif message["role"] == "toolResult":
            out.extend(_tool_results(message, images, compat))
    return out


DEFAULT_MAX_TOKENS_CAP = 32000
"""The output limit sent when the caller sets none: the model's ``maxTokens``, capped like the
reference does (``min(maxTokens, 32000)``)."""


def default_max_tokens(model: Model) -> int | None:
    """The reference's default output limit for ``model`` (None when it has no ``maxTokens``)."""
    return min(model.max_tokens, DEFAULT_MAX_TOKENS_CAP) if model.max_tokens > 0 else None


def build_openai_body(model: Model, context: Context, options: StreamOptions) -> dict[str, object]:
    """The streaming chat-completions request body."""
    compat = resolve_compat(model)
    with bulk_allocation():  # a resumed session: ~100 000 messages of fresh dicts (see bulk.py)
        messages = convert_messages(model, context, compat)
    # A plain JSON object: maxTokensField names one of its keys, and a before_provider_request
    # hook may change any of them.
    body: dict[str, object] = {
        "model": model.id,
        "messages": messages,
        "stream": True,
    }
    if compat["supportsUsageInStreaming"]:
        body["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        body["store"] = False
    max_tokens = options.max_tokens or default_max_tokens(model)
    if max_tokens:
        body[str(compat["maxTokensField"])] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": dict(tool.parameters),
                },
            }
            for tool in context.tools
        ]
        if compat.get("zaiToolStream"):
            body["tool_stream"] = True
    _add_reasoning(body, model, compat, options.reasoning)
    _add_routing(body, compat)
    extra = compat.get("extraBody")
    if isinstance(extra, dict):
        body.update(extra)  # models.json compat.extraBody: fields this client does not know
    return body


def _add_reasoning(
    body: dict[str, object], model: Model, compat: dict[str, object], level: str | None
) -> None:
    """The thinking switches of the request, in the dialect ``compat.thinkingFormat`` names."""
    if not model.reasoning:
        return
    thinking = bool(level) and level != "off"
    if compat["thinkingFormat"] in ("zai", "qwen"):
        body["enable_thinking"] = thinking
        return
    if compat["thinkingFormat"] == "deepseek":
        body["thinking"] = {"type": "enabled" if thinking else "disabled"}
        if thinking and level is not None:
            effort = model.thinking_level_map.get(level, _EFFORT[level])
            if effort is not None:
                body["reasoning_effort"] = effort
        return
    if not compat["supportsReasoningEffort"]:
        return
    # models.json thinkingLevelMap: the provider's own name for a level; null = send none. A
    # string for "off" is sent when thinking is off (some servers think unless told not to).
    if thinking and level is not None:
        effort = model.thinking_level_map.get(level, _EFFORT[level])
    else:
        effort = model.thinking_level_map.get("off")
    if effort is None:
        return
    if compat["thinkingFormat"] == "openrouter":
        body["reasoning"] = {"effort": effort}
    else:
        body["reasoning_effort"] = effort


def _add_routing(body: dict[str, object], compat: dict[str, object]) -> None:
    """OpenRouter's and the Vercel AI Gateway's provider-routing preferences, when configured."""
    routing = compat.get("openRouterRouting")
    if isinstance(routing, dict) and routing:
        body["provider"] = routing
    gateway = compat.get("vercelGatewayRouting")
    if isinstance(gateway, dict):
        chosen = {key: gateway[key] for key in ("only", "order") if gateway.get(key)}
        if chosen:
            body["providerOptions"] = {"gateway": chosen}
