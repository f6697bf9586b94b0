"""The Amazon Bedrock Converse streaming client (``api: "bedrock-converse-stream"``).

``POST https://bedrock-runtime.{region}.amazonaws.com/model/{modelId}/converse-stream``,
authenticated as :mod:`~knightcode._llm.bedrock_auth` describes, answers with an AWS binary
event stream (:mod:`~knightcode._llm.bedrock_eventstream`) of Converse events: ``messageStart``,
``contentBlockStart`` (tool use only: text and reasoning blocks start with their first delta),
``contentBlockDelta`` (text, reasoning text or signature, tool input JSON), ``contentBlockStop``,
``messageStop`` (the stop reason) and ``metadata`` (usage). An ``exception`` message mid-stream
(throttling, a validation error …) ends the stream with its message.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import AsyncGenerator, Callable
from typing import TypedDict, cast

import httpx

from knightcode._abort import AbortSignal
from knightcode._llm.bedrock_auth import resolve_bedrock_auth
from knightcode._llm.bedrock_convert import build_bedrock_body
from knightcode._llm.bedrock_eventstream import EventStreamDecoder
from knightcode._llm.http import make_client
from knightcode._llm.streaming import (
    BlockCloser,
    DoneReason,
    done_events,
    error_event,
    release,
    request_headers,
)
from knightcode._llm.transport import StreamFailed, iter_body, open_stream
from knightcode._llm.types import Context, Model, StreamOptions, new_assistant_message, set_usage
from knightcode._types.messages import AssistantContent, AssistantMessage
from knightcode._types.stream import AssistantMessageEvent

__all__ = ["bedrock_url", "stream_bedrock_converse"]


class _Reasoning(TypedDict, total=False):
    text: str
    signature: str
    redactedContent: str


class _ToolUseDelta(TypedDict, total=False):
    input: str


class _Delta(TypedDict, total=False):
    text: str
    reasoningContent: _Reasoning
    toolUse: _ToolUseDelta


class _ToolUseStart(TypedDict, total=False):
    toolUseId: str
    name: str


class _Start(TypedDict, total=False):
    toolUse: _ToolUseStart


class _Usage(TypedDict, total=False):
    inputTokens: int
    outputTokens: int
    cacheReadInputTokens: int
    cacheWriteInputTokens: int


class _Event(TypedDict, total=False):
    contentBlockIndex: int
    delta: _Delta
    start: _Start
    stopReason: str
    usage: _Usage
    message: str
    Message: str


_load_event = cast(Callable[[bytes], _Event], json.loads)

_STOP_REASONS: dict[str, DoneReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}


def bedrock_url(model: Model, region: str) -> str:
    """The endpoint: the model's base URL when it is not Bedrock's own (a proxy, a test
    server), else the runtime endpoint of ``region`` (see
    :func:`~knightcode._llm.bedrock_auth.bedrock_region`).
    """
    base = model.base_url.rstrip("/")
    if not base or ".amazonaws.com" in base:
        base = f"https://bedrock-runtime.{region}.amazonaws.com"
    return f"{base}/model/{urllib.parse.quote(model.id, safe='')}/converse-stream"


async def stream_bedrock_converse(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    client: httpx.AsyncClient | None = None,
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """Stream one Bedrock Converse response as provider-neutral events.

    Parameters and guarantees as
    :func:`~knightcode._llm.openai_completions.stream_openai_completions`; ``options.api_key``
    is a Bedrock bearer token, or a marker that the AWS credential chain is to be used.
    """
    options = options or StreamOptions()
    output = new_assistant_message(model)
    signal = options.signal or AbortSignal()
    http = client if client is not None else make_client()
    closer = BlockCloser(output)
    body_chunks: AsyncGenerator[bytes, None] | None = None
    secret = options.api_key
    try:
        auth = await signal.guard(
            asyncio.to_thread(resolve_bedrock_auth, options.api_key, model.base_url)
        )
        secret = auth.bearer or (auth.credentials.secret_key if auth.credentials else None)
        url = bedrock_url(model, auth.region)
        body = build_bedrock_body(model, context, options)
        # request_headers adds credentials only with a key: Bedrock's come from sign().
        headers = request_headers(model, options, {})
        headers["accept"] = "application/vnd.amazon.eventstream"
        response = await open_stream(
            http, url, headers, body, options, signal, sign=lambda c: auth.headers(url, c)
        )
        yield {"type": "start", "partial": output}
        content = output["content"]
        blocks: dict[int, int] = {}  # Bedrock block index -> content index
        stop: str | None = None
        decoder = EventStreamDecoder()
        body_chunks = iter_body(response, signal)
        async for chunk in body_chunks:
            for message in decoder.feed(chunk):
                kind = message.headers.get(":message-type", "event")
                if kind != "event":
                    _raise_exception(message.headers, message.payload)
                name = message.headers.get(":event-type", "")
                event = _load_event(message.payload) if message.payload else {}
                if name == "contentBlockDelta":
                    for item in _delta(event, content, blocks, closer, output):
                        yield item
                elif name == "contentBlockStart":
                    start = (event.get("start") or {}).get("toolUse")
                    if start is not None:
                        yield _open_tool(event, start, content, blocks, closer, output)
                elif name == "contentBlockStop":
                    index = blocks.pop(event.get("contentBlockIndex", -1), None)
                    if index is not None:
                        end = closer.end(index)
                        if end is not None:
                            yield end
                elif name == "messageStop":
                    stop = event.get("stopReason") or "end_turn"
                elif name == "metadata":
                    _apply_usage(output, model, event.get("usage") or {})
        if stop is None or decoder.pending:
            raise StreamFailed("terminated: the stream ended before the response was complete")
        for end in done_events(closer, output, _STOP_REASONS.get(stop), provider_reason=stop):
            yield end
    except Exception as exc:
        closer.finish_tool_calls()
        yield error_event(output, exc, signal, secret)
    finally:
        await release(body_chunks, http if client is None else None)


def _raise_exception(headers: dict[str, str], payload: bytes) -> None:
    kind = headers.get(":exception-type") or headers.get(":error-code") or "error"
    try:
        data = _load_event(payload)
        detail = data.get("message") or data.get("Message") or ""
    except ValueError:
        detail = payload.decode("utf-8", "replace")
    detail = detail or headers.get(":error-message", "the provider reported an error")
    raise StreamFailed(f"{kind}: {detail}")


def _open_tool(
    event: _Event,
    start: _ToolUseStart,
    content: list[AssistantContent],
    blocks: dict[int, int],
    closer: BlockCloser,
    output: AssistantMessage,
) -> AssistantMessageEvent:
    call_id = start.get("toolUseId", "")
    name = start.get("name", "")
    content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": {}})
    index = len(content) - 1
    blocks[event.get("contentBlockIndex", index)] = index
    block = content[index]
    assert block["type"] == "toolCall"
    closer.open_tool(index, block)
    return {
        "type": "toolcall_start",
        "contentIndex": index,
        "id": call_id,
        "toolName": name,
        "partial": output,
    }


def _delta(
    event: _Event,
    content: list[AssistantContent],
    blocks: dict[int, int],
    closer: BlockCloser,
    output: AssistantMessage,
) -> list[AssistantMessageEvent]:
    """The events of one ``contentBlockDelta``, opening its text or thinking block first when
    this is the block's first delta.
    """
    delta = event.get("delta") or {}
    position = event.get("contentBlockIndex", -1)
    events: list[AssistantMessageEvent] = []
    index = blocks.get(position)
    if "text" in delta:
        if index is None:
            content.append({"type": "text", "text": ""})
            index = blocks[position] = len(content) - 1
            closer.open(index)
            events.append({"type": "text_start", "contentIndex": index, "partial": output})
        block = content[index]
        if block["type"] == "text":
            block["text"] += delta["text"]
            events.append(
                {
                    "type": "text_delta",
                    "contentIndex": index,
                    "delta": delta["text"],
                    "partial": output,
                }
            )
    elif "reasoningContent" in delta:
        reasoning = delta["reasoningContent"]
        if index is None:
            content.append({"type": "thinking", "thinking": "", "thinkingSignature": ""})
            index = blocks[position] = len(content) - 1
            closer.open(index)
            events.append({"type": "thinking_start", "contentIndex": index, "partial": output})
        block = content[index]
        if block["type"] == "thinking":
            if "text" in reasoning:
                block["thinking"] += reasoning["text"]
                events.append(
                    {
                        "type": "thinking_delta",
                        "contentIndex": index,
                        "delta": reasoning["text"],
                        "partial": output,
                    }
                )
            if "signature" in reasoning:
                block["thinkingSignature"] = (
                    block.get("thinkingSignature", "") + reasoning["signature"]
                )
            if "redactedContent" in reasoning:
                block["redacted"] = True
                block["thinking"] = block["thinking"] or "[Reasoning redacted]"
                block["thinkingSignature"] = reasoning["redactedContent"]
    elif "toolUse" in delta and index is not None:
        piece = delta["toolUse"].get("input") or ""
        closer.add_arguments(index, piece)
        events.append(
            {"type": "toolcall_delta", "contentIndex": index, "delta": piece, "partial": output}
        )
    return events


def _apply_usage(output: AssistantMessage, model: Model, usage: _Usage) -> None:
    set_usage(
        output,
        model,
        usage.get("inputTokens") or 0,
        usage.get("outputTokens") or 0,
        usage.get("cacheReadInputTokens") or 0,
        usage.get("cacheWriteInputTokens") or 0,
    )
