"""The Anthropic messages client.

:func:`stream_anthropic_messages` mirrors the OpenAI client: an async generator of the same
provider-neutral events, ending with exactly one ``done`` or ``error``. Anthropic numbers its
content blocks itself (``index``) and opens and closes them explicitly, so block boundaries come
straight from the stream. Usage arrives twice: input and cache counts in ``message_start``, the
final counts in ``message_delta``; the partial message is updated both times.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TypedDict, cast

import httpx

from knightcode._abort import AbortSignal
from knightcode._llm.anthropic_convert import build_anthropic_body, thinking_enabled
from knightcode._llm.anthropic_oauth import (
    from_claude_code_name,
    is_oauth_token,
    oauth_headers,
)
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
from knightcode._llm.transport import StreamFailed, iter_body, open_stream
from knightcode._llm.types import Context, Model, StreamOptions, new_assistant_message, set_usage
from knightcode._types.messages import AssistantContent, AssistantMessage
from knightcode._types.stream import AssistantMessageEvent

__all__ = ["ANTHROPIC_VERSION", "stream_anthropic_messages"]


# The fields of the stream's events this client reads, all optional. One shape for every event
# kind (each kind uses its own few fields) keeps the loop free of per-event narrowing.
class _Delta(TypedDict, total=False):
    type: str  # content_block_delta: text_delta, thinking_delta, input_json_delta …
    text: str
    thinking: str
    partial_json: str | None
    signature: str
    stop_reason: str | None  # message_delta


class _ContentBlock(TypedDict, total=False):
    type: str
    data: str  # redacted_thinking
    id: str  # tool_use
    name: str
    input: dict[str, object] | None


class _Usage(TypedDict, total=False):
    input_tokens: int | None
    output_tokens: int | None
    cache_read_input_tokens: int | None
    cache_creation_input_tokens: int | None


class _Message(TypedDict, total=False):
    id: str | None
    usage: _Usage | None


class _Error(TypedDict, total=False):
    type: str
    message: str


class _Event(TypedDict, total=False):
    type: str
    index: int
    delta: _Delta  # content_block_delta and message_delta (where it may be null)
    content_block: _ContentBlock | None
    message: _Message | None
    usage: _Usage | None
    error: _Error | None


class _OpenBlock(TypedDict, total=False):
    """A content block being streamed, seen with every field a delta may write."""

    text: str
    thinking: str
    thinkingSignature: str


# Shapes declared once instead of checked per delta (the hot path): an event of another shape
# makes the loop raise inside the stream's try, and that becomes the stream's error event.
_load_event = cast(Callable[[str], _Event], parse_json)

ANTHROPIC_VERSION = "2023-06-01"
_STOP_REASONS: dict[str, DoneReason] = {
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
    if model.provider == "github-copilot":
        # Copilot's Anthropic endpoint takes its token as a bearer token (as the reference).
        headers = request_headers(model, options, {"authorization": f"Bearer {options.api_key}"})
        headers.setdefault("anthropic-version", ANTHROPIC_VERSION)
        if thinking_enabled(model, options):
            headers.setdefault("anthropic-beta", "interleaved-thinking-2025-05-14")
        return headers
    if is_oauth_token(options.api_key):
        auth = oauth_headers(options.api_key or "", thinking_enabled(model, options))
        headers = request_headers(model, options, auth)
        headers.setdefault("anthropic-version", ANTHROPIC_VERSION)
        return headers
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
    http = client if client is not None else make_client()
    closer = BlockCloser(output)
    body_chunks: AsyncGenerator[bytes, None] | None = None
    try:
        body = build_anthropic_body(model, context, options)
        rename = _tool_renamer(context, options)
        response = await open_stream(
            http, _url(model), _headers(model, options), body, options, signal
        )
        yield {"type": "start", "partial": output}

        content = output["content"]
        # The same list, seen as blocks a delta writes to: a text_delta names a text block, a
        # thinking_delta a thinking block; a delta naming a block of another kind raises KeyError
        # (an error event), as a wrong shape anywhere in the stream does.
        open_blocks = cast("Sequence[_OpenBlock]", content)
        blocks: dict[int, int] = {}  # Anthropic block index -> content index
        stop: str | None = None
        finished = False

        body_chunks = iter_body(response, signal)
        async for payloads in iter_sse_data(body_chunks):
            for data in payloads:
                event = _load_event(data)
                kind = event.get("type")
                if kind == "content_block_delta":
                    index = blocks.get(event.get("index", -1))
                    if index is None:
                        continue
                    delta = event["delta"]
                    block = open_blocks[index]
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
                        closer.add_arguments(index, piece)
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
                    start = _start_block(event, content, blocks, closer, output, rename)
                    if start is not None:
                        yield start
                elif kind == "content_block_stop":
                    index = blocks.pop(event.get("index", -1), None)
                    if index is not None:
                        end = closer.end(index)
                        if end is not None:
                            yield end
                elif kind == "message_start":
                    message: _Message = event.get("message") or {}
                    response_id = message.get("id")
                    if response_id:
                        output["responseId"] = response_id
                    _apply_usage(output, model, message.get("usage") or {})
                elif kind == "message_delta":
                    message_delta: _Delta = event.get("delta") or {}  # null: no reason
                    reason = message_delta.get("stop_reason")
                    if reason:
                        stop = reason
                    _apply_usage(output, model, event.get("usage") or {})
                elif kind == "message_stop":
                    finished = True
                elif kind == "error":
                    error: _Error = event.get("error") or {}
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


def _tool_renamer(context: Context, options: StreamOptions) -> Callable[[str], str] | None:
    """For a subscription token: Claude Code's tool names back to ours (anthropic_oauth.py)."""
    if not is_oauth_token(options.api_key):
        return None
    names = [tool.name for tool in context.tools or ()]
    return lambda name: from_claude_code_name(name, names)


def _start_block(
    event: _Event,
    content: list[AssistantContent],
    blocks: dict[int, int],
    closer: BlockCloser,
    output: AssistantMessage,
    rename: Callable[[str], str] | None = None,
) -> AssistantMessageEvent | None:
    start: _ContentBlock = event.get("content_block") or {}
    kind = start.get("type")
    block: AssistantContent
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
            "name": rename(start.get("name", "")) if rename else start.get("name", ""),
            "arguments": dict(start.get("input") or {}),
        }
    else:
        return None  # server tool results, citations …: not part of the neutral message
    content.append(block)
    index = len(content) - 1
    blocks[event.get("index", index)] = index
    if block["type"] == "toolCall":
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


def _apply_usage(output: AssistantMessage, model: Model, usage: _Usage) -> None:
    # Fields absent or null keep their earlier value: proxies often send only output_tokens last.
    current = output["usage"]
    set_usage(
        output,
        model,
        _count(usage.get("input_tokens"), current["input"]),
        _count(usage.get("output_tokens"), current["output"]),
        _count(usage.get("cache_read_input_tokens"), current["cacheRead"]),
        _count(usage.get("cache_creation_input_tokens"), current["cacheWrite"]),
    )


def _count(value: object, earlier: int) -> int:
    return value if isinstance(value, int) else earlier
