"""Building a Gemini ``streamGenerateContent`` request body from a provider-neutral context.

Gemini speaks in ``contents`` (roles ``user`` and ``model``) made of ``parts``. Thinking comes
back as text parts marked ``thought: true``; a ``thoughtSignature`` (Gemini's encrypted
reasoning state) may ride on any part and has to go back on the same part for the model to
continue its reasoning — Gemini 3 rejects a function call sent back without one. Signatures are
only valid for the model that made them, so they are sent only for that model's own turns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict, cast

from knightcode._llm.transform import is_same_model, iter_prepared
from knightcode._llm.types import Context, Model, StreamOptions
from knightcode._llm.user_blocks import user_blocks
from knightcode._types.messages import (
    AssistantMessage,
    ImageContent,
    ToolResultMessage,
)

__all__ = ["GEMINI3_SKIP_SIGNATURE", "build_gemini_body", "thinking_config"]

# Gemini 3 insists on a signature on every function call of a thinking turn; a call made by
# another model has none. Google documents this value for exactly that case.
GEMINI3_SKIP_SIGNATURE = "skip_thought_signature_validator"
_IMAGES_HEADER = "Tool result image:"
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")

# Token budgets per level for the Gemini 2.5 family (the reference's values; any other model
# gets -1, "dynamic"); settings thinkingBudgets replace them level by level.
_BUDGETS = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
# Gemini 3 takes a level instead of a budget; Pro knows only LOW and HIGH.
_LEVELS_PRO = {"minimal": "LOW", "low": "LOW", "medium": "HIGH", "high": "HIGH"}
_LEVELS = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}
_GEMINI3_PRO = re.compile(r"gemini-3(?:\.\d+)?-pro")
_GEMINI3_FLASH = re.compile(r"gemini-3(?:\.\d+)?-flash")
# Tools are declared with ``parametersJsonSchema`` (full JSON Schema: anyOf, type arrays,
# additionalProperties, $ref …, which the older OpenAPI-subset ``parameters`` refuses); these
# annotation keys are not part of the subset Gemini reads and are left out.
_UNSUPPORTED_SCHEMA_KEYS = frozenset({"$schema", "$comment"})


class _InlineData(TypedDict):
    mimeType: str
    data: str


class _FunctionCall(TypedDict):
    name: str
    args: dict[str, object]
    id: NotRequired[str]


class _FunctionResponse(TypedDict):
    name: str
    response: dict[str, object]
    id: NotRequired[str]


class _Part(TypedDict, total=False):
    text: str
    thought: bool
    thoughtSignature: str
    inlineData: _InlineData
    functionCall: _FunctionCall
    functionResponse: _FunctionResponse


class _Content(TypedDict):
    role: Literal["user", "model"]
    parts: list[_Part]


def _valid_signature(signature: str | None) -> bool:
    # Signatures are bytes on Google's side: anything but base64 makes the request fail.
    return (
        bool(signature) and len(signature or "") % 4 == 0 and bool(_BASE64.match(signature or ""))
    )


def _image(block: ImageContent) -> _Part:
    return {"inlineData": {"mimeType": block["mimeType"], "data": block["data"]}}


def _text(text: str) -> _Part:
    return {"text": text}


def _assistant(message: AssistantMessage, model: Model) -> _Content | None:
    same = is_same_model(message, model)
    gemini3 = "gemini-3" in model.id.lower()
    parts: list[_Part] = []
    for block in message["content"]:
        if block["type"] == "text":
            if block["text"].strip():
                parts.append({"text": block["text"]})
        elif block["type"] == "thinking":
            if not block["thinking"].strip() or block.get("redacted"):
                continue
            part: _Part = {"thought": True, "text": block["thinking"]}
            signature = block.get("thinkingSignature")
            if same and _valid_signature(signature):
                part["thoughtSignature"] = signature or ""
            parts.append(part)
        elif block["type"] == "toolCall":
            call: _Part = {
                "functionCall": {
                    "name": block["name"],
                    "args": block["arguments"],
                    "id": block["id"],
                }
            }
            signature = block.get("thoughtSignature")
            if same and _valid_signature(signature):
                call["thoughtSignature"] = signature or ""
            elif gemini3:
                call["thoughtSignature"] = GEMINI3_SKIP_SIGNATURE
            parts.append(call)
    return {"role": "model", "parts": parts} if parts else None


class _FunctionResponseWithParts(_FunctionResponse, total=False):
    parts: list[_Part]


def _function_response(message: ToolResultMessage, pictures: list[ImageContent]) -> _Part:
    text = "\n".join(b["text"] for b in message["content"] if b["type"] == "text")
    if not text:
        text = "(see attached image)" if pictures else ""
    key = "error" if message["isError"] else "output"
    return {
        "functionResponse": {
            "name": message["toolName"],
            "response": {key: text},
            "id": message["toolCallId"],
        }
    }


def _add_tool_result(
    out: list[_Content], message: ToolResultMessage, images: bool, nested: bool
) -> None:
    """Add one tool result to ``out``.

    All responses to a turn's calls go in one user turn. Images go inside the response
    (``functionResponse.parts``) for Gemini 3; older models take them only as ordinary parts,
    in one user turn after the responses ("Tool result image:"), shared by consecutive results.
    """
    pictures = [b for b in message["content"] if b["type"] == "image"] if images else []
    part = _function_response(message, pictures)
    image_parts = [_image(picture) for picture in pictures]
    if nested and image_parts:
        response = cast(_FunctionResponseWithParts, part["functionResponse"])
        response["parts"] = image_parts
    last = out[-1] if out else None
    images_turn = None
    if len(out) >= 2 and last is not None and last["parts"][0].get("text") == _IMAGES_HEADER:
        images_turn, last = last, out[-2]  # the responses turn is the one before
    if last is not None and last["role"] == "user" and "functionResponse" in last["parts"][0]:
        last["parts"].append(part)
    else:
        out.append({"role": "user", "parts": [part]})
        images_turn = None
    if nested or not image_parts:
        return
    if images_turn is None:
        out.append({"role": "user", "parts": [{"text": _IMAGES_HEADER}, *image_parts]})
    else:
        images_turn["parts"].extend(image_parts)


def convert_contents(model: Model, context: Context) -> list[_Content]:
    """The ``contents`` array (see :func:`_add_tool_result` for tool results)."""
    out: list[_Content] = []
    images = "image" in model.input
    nested = "gemini-3" in model.id.lower()
    for message in iter_prepared(context.messages, model):
        if message["role"] == "user":
            parts = user_blocks(message, images, _text, _image)
            if parts:
                out.append({"role": "user", "parts": parts})
        elif message["role"] == "assistant":
            assistant = _assistant(message, model)
            if assistant is not None:
                out.append(assistant)
        elif message["role"] == "toolResult":
            _add_tool_result(out, message, images, nested)
    return out


def clean_schema(schema: Mapping[str, object]) -> dict[str, object]:
    """A tool's JSON schema without the annotation keys Gemini does not read."""
    return {
        key: _clean_value(value)
        for key, value in schema.items()
        if key not in _UNSUPPORTED_SCHEMA_KEYS
    }


def _clean_value(value: object) -> object:
    if isinstance(value, dict):
        return clean_schema({str(key): item for key, item in value.items()})
    if isinstance(value, list):
        return [_clean_value(item) for item in value]
    return value


def thinking_config(model: Model, options: StreamOptions) -> dict[str, object] | None:
    """``generationConfig.thinkingConfig`` for the requested level, or None to send none.

    Gemini 3 takes a ``thinkingLevel`` (models.json ``thinkingLevelMap`` may rename it); other
    models a ``thinkingBudget`` in tokens (settings ``thinkingBudgets`` first). Thinking "off"
    is said explicitly, as the reference does: the lowest level Gemini 3 has (it cannot stop
    thinking), a zero budget for the others.
    """
    if not model.reasoning:
        return None
    model_id = model.id.lower()
    pro3 = bool(_GEMINI3_PRO.search(model_id))
    gemini3 = pro3 or bool(_GEMINI3_FLASH.search(model_id))
    level = options.reasoning
    if not level or level == "off":
        if gemini3:
            return {"thinkingLevel": "LOW" if pro3 else "MINIMAL"}
        return {"thinkingBudget": 0}
    effort = level if level in _LEVELS else "high"  # xhigh and max: Gemini's highest
    config: dict[str, object] = {"includeThoughts": True}
    if gemini3:
        mapped = model.thinking_level_map.get(level, (_LEVELS_PRO if pro3 else _LEVELS)[effort])
        if mapped is not None:
            config["thinkingLevel"] = mapped
        return config
    custom = (options.thinking_budgets or {}).get(effort)
    if custom is None:
        defaults = next((table for part, table in _BUDGETS if part in model_id), None)
        custom = defaults[effort] if defaults is not None else -1
    config["thinkingBudget"] = custom
    return config


def build_gemini_body(model: Model, context: Context, options: StreamOptions) -> dict[str, object]:
    """The ``streamGenerateContent`` request body (the model is named in the URL, not here)."""
    body: dict[str, object] = {"contents": convert_contents(model, context)}
    if context.system_prompt:
        body["systemInstruction"] = {"parts": [{"text": context.system_prompt}]}
    if context.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parametersJsonSchema": clean_schema({"type": "object", **tool.parameters}),
                    }
                    for tool in context.tools
                ]
            }
        ]
    generation: dict[str, object] = {
        "maxOutputTokens": options.max_tokens or model.max_tokens,
    }
    if options.temperature is not None:
        generation["temperature"] = options.temperature
    thinking = thinking_config(model, options)
    if thinking is not None:
        generation["thinkingConfig"] = thinking
    body["generationConfig"] = generation
    return body
