"""The Anthropic messages client.

:func:`stream_anthropic_messages` mirrors the OpenAI client: an async generator of the same
provider-neutral events, ending with exactly one ``done`` or ``error``. Anthropic numbers its
content blocks itself (``index``) and opens and closes them explicitly, so block boundaries come
straight from the stream. Usage arrives twice: input and cache counts in ``message_start``, the
final counts in ``message_delta``; the partial message is updated both times.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import httpx

from knightcode._abort import AbortSignal
from knightcode._llm.anthropic_convert import build_anthropic_body, thinking_enabled
from knightcode._llm.sse import iter_sse_data, parse_json
from knightcode._llm.streaming import (
    BlockCloser,
    done_events,
    error_event,
    release,
    request_headers,
)
from knightcode._llm.transport import StreamFailed, iter_body, open_stream
from knightcode._llm.types import Context, Model, StreamOptions, new_assistant_message, set_usage
from knightcode._types.stream import AssistantMessageEvent

__all__ = ["ANTHROPIC_VERSION", "stream_anthropic_messages"]

ANTHROPIC_VERSION = "2023-06-01"
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",  # the server paused a long turn; continuing is the caller's choice
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}


def _url(model: Model) -> str:
    # Anthropic's own base URL has no /v1 (the SDK adds it); proxies and our scripted server
    # are often configured with it. Accept both.
    base = model.base_url.rstrip("/")
    return base + ("/messages" if base.endswith("/v1") else "/v1/messages")


def _headers(model: Model, options: StreamOptions) -> dict[str, str]:
    headers = request_headers(model, options, {"x-api-key": options.api_key or ""})
    headers.setdefault("anthropic-version", ANTHROPIC_VERSION)
    if thinking_enabled(model, options):
        headers.setdefault("anthropic-beta", "interleaved-thinking-2025-05-14")
    return headers


async def stream_anthropic_messages(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    client: httpx.AsyncClient | None = None,
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """Stream one Anthropic message as provider-neutral events.

    Parameters and guarantees as
    :func:`~knightcode._llm.openai_completions.stream_openai_completions`.
    """
    options = options or StreamOptions()
    output = new_assistant_message(model)
    signal = options.signal or AbortSignal()
    http = client if client is not None else httpx.AsyncClient()
    closer = BlockCloser(output)
    body_chunks: AsyncGenerator[bytes, None] | None = None
    try:
        body = build_anthropic_body(model, context, options)
        response = await open_stream(
            http, _url(model), _headers(model, options), body, options, signal
        )
        yield {"type": "start", "partial": output}

        content: list[Any] = output["content"]
        blocks: dict[int, int] = {}  # Anthropic block index -> content index
        stop: str | None = None
        finished = False

        body_chunks = iter_body(response, signal)
        async for payloads in iter_sse_data(body_chunks):
            for data in payloads:
                event = parse_json(data)
                kind = event.get("type")
                if kind == "content_block_delta":
                    index = blocks.get(event.get("index", -1))
                    if index is None:
                        continue
                    delta = event["delta"]
                    block = content[index]
                    delta_kind = delta.get("type")
                    if delta_kind == "text_delta":
                        text = delta["text"]
                        acc = block["text"]
                        block["text"] = ""  # drop the dict's reference so += resizes in place
                        acc += text
                        block["text"] = acc
                        yield {
                            "type": "text_delta",
                            "contentIndex": index,
                            "delta": text,
                            "partial": output,
                        }
                    elif delta_kind == "thinking_delta":
                        text = delta["thinking"]
                        acc = block["thinking"]
                        block["thinking"] = ""
                        acc += text
                        block["thinking"] = acc
                        yield {
                            "type": "thinking_delta",
                            "contentIndex": index,
                            "delta": text,
                            "partial": output,
                        }
                    elif delta_kind == "input_json_delta":
                        piece = delta.get("partial_json") or ""
                        closer.add_arguments(block, piece)
                        yield {
                            "type": "toolcall_delta",
                            "contentIndex": index,
                            "delta": piece,
                            "partial": output,
                        }
                    elif delta_kind == "signature_delta":
                        block["thinkingSignature"] = block.get("thinkingSignature", "") + delta.get(
                            "signature", ""
                        )
                elif kind == "content_block_start":
                    start = _start_block(event, content, blocks, closer, output)
                    if start is not None:
                        yield start
                elif kind == "content_block_stop":
                    index = blocks.pop(event.get("index", -1), None)
                    if index is not None:
                        end = closer.end(index)
                        if end is not None:
                            yield end
                elif kind == "message_start":
                    message = event.get("message") or {}
                    if message.get("id"):
                        output["responseId"] = message["id"]
                    _apply_usage(output, model, message.get("usage") or {})
                elif kind == "message_delta":
                    reason = (event.get("delta") or {}).get("stop_reason")
                    if reason:
                        stop = reason
                    _apply_usage(output, model, event.get("usage") or {})
                elif kind == "message_stop":
                    finished = True
                elif kind == "error":
                    error = event.get("error") or {}
                    raise StreamFailed(
                        f"{error.get('type', 'error')}: "
                        f"{error.get('message', 'the provider reported an error')}"
                    )
        if not finished:
            raise StreamFailed("terminated: the stream ended before the response was complete")
        for end in done_events(
            closer, output, _STOP_REASONS.get(stop or "end_turn"), provider_reason=stop
        ):
            yield end
    except Exception as exc:
        closer.finish_tool_calls()
        yield error_event(output, exc, signal, options.api_key)
    finally:
        await release(body_chunks, http if client is None else None)


def _start_block(
    event: dict[str, Any],
    content: list[Any],
    blocks: dict[int, int],
    closer: BlockCloser,
    output: Any,
) -> AssistantMessageEvent | None:
    start = event.get("content_block") or {}
    kind = start.get("type")
    block: dict[str, Any]
    if kind == "text":
        block = {"type": "text", "text": ""}
    elif kind == "thinking":
        block = {"type": "thinking", "thinking": "", "thinkingSignature": ""}
    elif kind == "redacted_thinking":
        # Opaque, encrypted reasoning: kept (in thinkingSignature) only to send back verbatim.
        block = {
            "type": "thinking",
            "thinking": "[Reasoning redacted]",
            "thinkingSignature": start.get("data", ""),
            "redacted": True,
        }
    elif kind == "tool_use":
        block = {
            "type": "toolCall",
            "id": start.get("id", ""),
            "name": start.get("name", ""),
            "arguments": dict(start.get("input") or {}),
        }
    else:
        return None  # server tool results, citations …: not part of the neutral message
    content.append(block)
    index = len(content) - 1
    blocks[event.get("index", index)] = index
    if kind == "tool_use":
        closer.open_tool(index, block)
        return {
            "type": "toolcall_start",
            "contentIndex": index,
            "id": block["id"],
            "toolName": block["name"],
            "partial": output,
        }
    closer.open(index)
    if kind == "text":
        return {"type": "text_start", "contentIndex": index, "partial": output}
    return {"type": "thinking_start", "contentIndex": index, "partial": output}


def _apply_usage(output: Any, model: Model, usage: dict[str, Any]) -> None:
    # Fields absent or null keep their earlier value: proxies often send only output_tokens last.
    current = output["usage"]
    values = []
    for key, name in (
        ("input_tokens", "input"),
        ("output_tokens", "output"),
        ("cache_read_input_tokens", "cacheRead"),
        ("cache_creation_input_tokens", "cacheWrite"),
    ):
        value = usage.get(key)
        values.append(value if isinstance(value, int) else current[name])
    set_usage(output, model, *values)
