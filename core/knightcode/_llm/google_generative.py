"""The Google Gemini client (``api: "google-generative-ai"``).

``POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse`` answers with server-sent events,
each a whole ``GenerateContentResponse``: the new parts of the first candidate, and on the last
events its ``finishReason`` and ``usageMetadata``. Gemini has no block boundaries of its own: a
block ends when a part of another kind arrives (text after thought, a function call), and a
function call arrives whole (arguments as an object), so it opens and closes in one step. Calls
may lack an id (older models); one is made up, since every tool result must name its call.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncGenerator, Callable
from typing import TypedDict, cast

import httpx

from knightcode._abort import AbortSignal
from knightcode._llm.google_convert import build_gemini_body
from knightcode._llm.http import make_client
from knightcode._llm.sse import iter_sse_data, parse_json
from knightcode._llm.streaming import (
    BlockCloser,
    DoneReason,
    done_events,
    error_event,
    release,
    request_headers,
)
from knightcode._llm.transport import (
    StreamFailed,
    compact_json,
    error_message_of,
    iter_body,
    open_stream,
)
from knightcode._llm.types import Context, Model, StreamOptions, new_assistant_message, set_usage
from knightcode._types.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from knightcode._types.stream import AssistantMessageEvent

__all__ = ["gemini_url", "stream_google_generative"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"


class _FunctionCall(TypedDict, total=False):
    id: str | None
    name: str
    args: dict[str, object] | None


class _Part(TypedDict, total=False):
    text: str
    thought: bool
    thoughtSignature: str
    functionCall: _FunctionCall


class _Content(TypedDict, total=False):
    parts: list[_Part]


class _Candidate(TypedDict, total=False):
    content: _Content
    finishReason: str


class _UsageMetadata(TypedDict, total=False):
    promptTokenCount: int
    candidatesTokenCount: int
    thoughtsTokenCount: int
    cachedContentTokenCount: int


class _PromptFeedback(TypedDict, total=False):
    blockReason: str


class _Chunk(TypedDict, total=False):
    promptFeedback: _PromptFeedback
    candidates: list[_Candidate]
    usageMetadata: _UsageMetadata
    responseId: str
    error: object


_load_chunk = cast(Callable[[str], _Chunk], parse_json)

# finishReason -> stop reason; every other reason (SAFETY, RECITATION, MALFORMED_FUNCTION_CALL …)
# means no usable answer and ends the stream with an error naming it.
_STOP_REASONS: dict[str, DoneReason] = {"STOP": "stop", "MAX_TOKENS": "length"}
_call_ids = itertools.count(1)


def gemini_url(model: Model) -> str:
    """The streaming endpoint of ``model``."""
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/models/{model.id}:streamGenerateContent?alt=sse"


def _new_call_id(name: str, content: list[object]) -> str:
    # Unique within the message, like the reference's name_time_counter ids.
    while True:
        candidate = f"{name}_{int(time.time() * 1000)}_{next(_call_ids)}"
        if not any(isinstance(b, dict) and b.get("id") == candidate for b in content):
            return candidate


async def stream_google_generative(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    client: httpx.AsyncClient | None = None,
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """Stream one Gemini response as provider-neutral events.

    Parameters and guarantees as
    :func:`~knightcode._llm.openai_completions.stream_openai_completions`.
    """
    options = options or StreamOptions()
    output = new_assistant_message(model)
    signal = options.signal or AbortSignal()
    http = client if client is not None else make_client()
    closer = BlockCloser(output)
    body_chunks: AsyncGenerator[bytes, None] | None = None
    try:
        body = build_gemini_body(model, context, options)
        headers = request_headers(model, options, {"x-goog-api-key": options.api_key or ""})
        response = await open_stream(http, gemini_url(model), headers, body, options, signal)
        yield {"type": "start", "partial": output}
        content = output["content"]
        current: int | None = None  # index of the open text or thinking block
        finish: str | None = None
        body_chunks = iter_body(response, signal)
        async for payloads in iter_sse_data(body_chunks):
            for data in payloads:
                chunk = _load_chunk(data)
                if "error" in chunk:
                    raise StreamFailed(error_message_of(chunk) or "the provider reported an error")
                blocked = (chunk.get("promptFeedback") or {}).get("blockReason")
                if blocked:  # the prompt itself was refused: no candidates follow
                    raise StreamFailed(f"The provider blocked the prompt: {blocked}")
                response_id = chunk.get("responseId")
                if response_id:
                    output["responseId"] = response_id
                candidates = chunk.get("candidates") or []
                if candidates:  # only the first candidate is the answer
                    candidate = candidates[0]
                    for part in (candidate.get("content") or {}).get("parts") or ():
                        events, current = _part_events(part, output, closer, current)
                        for event in events:
                            yield event
                    finish = candidate.get("finishReason") or finish
                usage = chunk.get("usageMetadata")
                if usage:
                    _apply_usage(output, model, usage)
        if finish is None:
            raise StreamFailed("terminated: the stream ended before the response was complete")
        stop = _STOP_REASONS.get(finish)
        if stop == "stop" and any(block["type"] == "toolCall" for block in content):
            stop = "toolUse"
        for end in done_events(closer, output, stop, provider_reason=finish):
            yield end
    except Exception as exc:
        closer.finish_tool_calls()
        yield error_event(output, exc, signal, options.api_key)
    finally:
        await release(body_chunks, http if client is None else None)


def _part_events(
    part: _Part, output: AssistantMessage, closer: BlockCloser, current: int | None
) -> tuple[list[AssistantMessageEvent], int | None]:
    """The events of one streamed part, appending to ``output`` in place, and the index of the
    text or thinking block left open (``current`` before).
    """
    content = output["content"]
    events: list[AssistantMessageEvent] = []
    signature = part.get("thoughtSignature")
    text = part.get("text")
    if text == "" and signature and current is not None:
        closing = content[current]
        if closing["type"] == "thinking":  # a signature closing the thought on an empty part
            closing["thinkingSignature"] = signature
        return events, current
    if text and "functionCall" not in part:  # an empty text part (the last event's) adds nothing
        kind = "thinking" if part.get("thought") else "text"
        if current is None or content[current]["type"] != kind:
            if current is not None:
                ended = closer.end(current)
                if ended is not None:
                    events.append(ended)
            block: TextContent | ThinkingContent = (
                {"type": "thinking", "thinking": ""}
                if kind == "thinking"
                else {"type": "text", "text": ""}
            )
            content.append(block)
            current = len(content) - 1
            closer.open(current)
            if kind == "thinking":
                events.append(
                    {"type": "thinking_start", "contentIndex": current, "partial": output}
                )
            else:
                events.append({"type": "text_start", "contentIndex": current, "partial": output})
        target = content[current]
        if target["type"] == "thinking":
            target["thinking"] += text
            if signature:  # some backends send it on the first delta only: keep the last one
                target["thinkingSignature"] = signature
            events.append(
                {
                    "type": "thinking_delta",
                    "contentIndex": current,
                    "delta": text,
                    "partial": output,
                }
            )
        elif target["type"] == "text":
            target["text"] += text
            events.append(
                {"type": "text_delta", "contentIndex": current, "delta": text, "partial": output}
            )
        return events, current
    call = part.get("functionCall")
    if call is None:
        return events, current
    if current is not None:
        ended = closer.end(current)
        if ended is not None:
            events.append(ended)
    name = call.get("name") or ""
    call_id = call.get("id")
    if not call_id or any(b["type"] == "toolCall" and b["id"] == call_id for b in content):
        call_id = _new_call_id(name, cast("list[object]", content))
    tool: ToolCall = {
        "type": "toolCall",
        "id": call_id,
        "name": name,
        "arguments": dict(call.get("args") or {}),
    }
    if signature:
        tool["thoughtSignature"] = signature
    content.append(tool)
    index = len(content) - 1
    closer.open_tool(index, tool)
    events.append(
        {
            "type": "toolcall_start",
            "contentIndex": index,
            "id": call_id,
            "toolName": name,
            "partial": output,
        }
    )
    events.append(
        {
            "type": "toolcall_delta",
            "contentIndex": index,
            "delta": compact_json(tool["arguments"]),  # JSON.stringify's spelling
            "partial": output,
        }
    )
    ended = closer.end(index)
    if ended is not None:
        events.append(ended)
    return events, None


def _apply_usage(output: AssistantMessage, model: Model, usage: _UsageMetadata) -> None:
    # promptTokenCount includes the cached tokens; knightcode counts them apart. Thoughts are
    # billed as output.
    cached = usage.get("cachedContentTokenCount") or 0
    prompt = usage.get("promptTokenCount") or 0
    produced = (usage.get("candidatesTokenCount") or 0) + (usage.get("thoughtsTokenCount") or 0)
    set_usage(output, model, max(prompt - cached, 0), produced, cached, 0)
