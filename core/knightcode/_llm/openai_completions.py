"""The OpenAI-compatible chat-completions client (OpenAI, llama.cpp, vLLM, Groq, OpenRouter …).

:func:`stream_openai_completions` is an async generator of stream events. It is the hot path of
the whole agent (one event per token), so the delta loop is written inline with local variables:
one ``json.loads`` and one small event dict per delta, text appended in place (see
``_append``), no copies of the message being built.

Tool-call arguments arrive as JSON text split over many chunks, keyed by the call's ``index``
(several calls may interleave). They are collected per call and parsed once, when the call ends;
text that is not valid JSON (a truncated ``length`` stop) is repaired on a best-effort basis, and
gives ``{}`` when it cannot be.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import TypedDict, cast

import httpx

from knightcode._abort import AbortSignal
from knightcode._llm.http import make_client
from knightcode._llm.openai_convert import build_openai_body
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
    error_message_of,
    iter_body,
    open_stream,
)
from knightcode._llm.types import Context, Model, StreamOptions, new_assistant_message, set_usage
from knightcode._types.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from knightcode._types.stream import AssistantMessageEvent

__all__ = ["stream_openai_completions"]


# The fields of a streamed chunk this client reads, all optional (servers omit what is empty).
class _FunctionDelta(TypedDict, total=False):
    name: str | None
    arguments: str | None


class _ToolCallDelta(TypedDict, total=False):
    index: int
    id: str | None
    function: _FunctionDelta | None


class _Delta(TypedDict, total=False):
    content: str | None
    reasoning_content: str | None  # llama.cpp
    reasoning: str | None  # OpenRouter, vLLM
    tool_calls: list[_ToolCallDelta] | None


class _Choice(TypedDict, total=False):
    delta: _Delta | None
    finish_reason: str | None


class _PromptDetails(TypedDict, total=False):
    cached_tokens: int | None


class _Usage(TypedDict, total=False):
    prompt_tokens: int | None
    completion_tokens: int | None
    prompt_tokens_details: _PromptDetails | None


class _Chunk(TypedDict, total=False):
    id: str | None
    choices: list[_Choice] | None
    usage: _Usage | None
    error: object


# The chunk's shape is declared once, here, instead of being checked per delta (the hot path): a
# server that sends another shape makes the loop raise (TypeError, AttributeError …) inside the
# stream's try, and that becomes the stream's error event like any other failure.
_load_chunk = cast(Callable[[str], _Chunk], parse_json)

_STOP_REASONS: dict[str, DoneReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


def _url(model: Model) -> str:
    return model.base_url.rstrip("/") + "/chat/completions"


async def stream_openai_completions(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    client: httpx.AsyncClient | None = None,
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """Stream one chat completion as provider-neutral events.

    The stream always ends with exactly one ``done`` or ``error`` event; failures never raise
    (only the caller's own cancellation does). Consume it to the end, or close it with
    ``aclose()`` (``contextlib.aclosing``), so the connection is released promptly.

    :param model: the model (``api`` "openai-completions")
    :param context: system prompt, messages and tools
    :param options: key, limits, abort signal, hooks; defaults when None
    :param client: a shared ``httpx.AsyncClient`` (connection reuse); a private one otherwise
    """
    options = options or StreamOptions()
    output = new_assistant_message(model)
    signal = options.signal or AbortSignal()
    http = client if client is not None else make_client()
    closer = BlockCloser(output)
    body_chunks: AsyncGenerator[bytes, None] | None = None
    try:
        body = build_openai_body(model, context, options)
        headers = request_headers(model, options, {"authorization": f"Bearer {options.api_key}"})
        response = await open_stream(http, _url(model), headers, body, options, signal)
        yield {"type": "start", "partial": output}

        content = output["content"]
        loads = _load_chunk
        text_block: TextContent | None = None  # the open text block, if any
        text_index = -1
        think_block: ThinkingContent | None = None
        think_index = -1
        tools: dict[int, ToolCall] = {}  # OpenAI index -> open tool-call block
        finish: str | None = None
        saw_done = False
        has_id = False
        ended = False

        body_chunks = iter_body(response, signal)
        async for payloads in iter_sse_data(body_chunks):
            if ended:
                continue
            for data in payloads:
                if data == "[DONE]":
                    saw_done = True
                    continue
                obj = loads(data)
                if not has_id:
                    response_id = obj.get("id")
                    if response_id:
                        output["responseId"] = response_id
                        has_id = True
                choices = obj.get("choices")
                if choices:
                    choice = choices[0]
                    delta = choice.get("delta")
                    if delta:
                        # llama.cpp says reasoning_content, others reasoning: both are thinking.
                        field = "reasoning_content"
                        thought = delta.get("reasoning_content")
                        if not thought:
                            field = "reasoning"
                            thought = delta.get("reasoning")
                        if thought and isinstance(thought, str):
                            if think_block is None:
                                if text_block is not None:
                                    yield closer.end_text(text_index)
                                    text_block = None
                                think_block = {
                                    "type": "thinking",
                                    "thinking": "",
                                    "thinkingSignature": field,
                                }
                                content.append(think_block)
                                think_index = len(content) - 1
                                closer.open(think_index)
                                yield {
                                    "type": "thinking_start",
                                    "contentIndex": think_index,
                                    "partial": output,
                                }
                            acc = think_block["thinking"]
                            think_block["thinking"] = ""  # see the text case below
                            acc += thought
                            think_block["thinking"] = acc
                            yield {
                                "type": "thinking_delta",
                                "contentIndex": think_index,
                                "delta": thought,
                                "partial": output,
                            }
                        text = delta.get("content")
                        if text:
                            if text_block is None:
                                if think_block is not None:
                                    yield closer.end_thinking(think_index)
                                    think_block = None
                                text_block = {"type": "text", "text": ""}
                                content.append(text_block)
                                text_index = len(content) - 1
                                closer.open(text_index)
                                yield {
                                    "type": "text_start",
                                    "contentIndex": text_index,
                                    "partial": output,
                                }
                            # Appending to a string still referenced by the dict copies it every
                            # time (quadratic over a long answer); with the dict's reference
                            # dropped first, CPython grows the string in place.
                            acc = text_block["text"]
                            text_block["text"] = ""
                            acc += text
                            text_block["text"] = acc
                            yield {
                                "type": "text_delta",
                                "contentIndex": text_index,
                                "delta": text,
                                "partial": output,
                            }
                        calls = delta.get("tool_calls")
                        if calls:
                            if text_block is not None:
                                yield closer.end_text(text_index)
                                text_block = None
                            if think_block is not None:
                                yield closer.end_thinking(think_index)
                                think_block = None
                            for event in _tool_deltas(calls, tools, output, closer):
                                yield event
                    reason = choice.get("finish_reason")
                    if reason:
                        finish = reason
                elif "error" in obj:
                    # Some servers report a failure inside an otherwise successful stream.
                    raise StreamFailed(error_message_of(obj) or "the provider reported an error")
                usage = obj.get("usage")
                if usage:
                    _apply_usage(output, model, usage)
            if saw_done:
                ended = True  # keep draining (the connection is reusable) but ignore the rest
        if not saw_done and finish is None:
            raise StreamFailed("terminated: the stream ended before the response was complete")
        stop = _STOP_REASONS.get(finish or "stop")
        if stop == "stop" and tools:
            stop = "toolUse"  # some servers say "stop" after tool calls
        for event in done_events(closer, output, stop, provider_reason=finish):
            yield event
    except Exception as exc:
        closer.finish_tool_calls()
        yield error_event(output, exc, signal, options.api_key)
    finally:
        await release(body_chunks, http if client is None else None)


def _tool_deltas(
    calls: list[_ToolCallDelta],
    tools: dict[int, ToolCall],
    output: AssistantMessage,
    closer: BlockCloser,
) -> list[AssistantMessageEvent]:
    events: list[AssistantMessageEvent] = []
    content = output["content"]
    for call in calls:
        index = call.get("index", 0)
        function: _FunctionDelta = call.get("function") or {}
        call_id = call.get("id") or ""
        block = tools.get(index)
        # A server that numbers every call 0 still gives each a new id.
        if block is None or (call_id and block["id"] and call_id != block["id"]):
            block = {
                "type": "toolCall",
                "id": call_id,
                "name": function.get("name") or "",
                "arguments": {},
            }
            tools[index] = block
            content.append(block)
            content_index = len(content) - 1
            closer.open_tool(content_index, block)
            events.append(
                {
                    "type": "toolcall_start",
                    "contentIndex": content_index,
                    "id": block["id"],
                    "toolName": block["name"],
                    "partial": output,
                }
            )
        else:
            content_index = closer.index_of(block)
            if call_id and not block["id"]:
                block["id"] = call_id
            name = function.get("name")
            if name and not block["name"]:
                block["name"] = name
        piece = function.get("arguments") or ""
        if piece:
            closer.add_arguments(content_index, piece)
        events.append(
            {
                "type": "toolcall_delta",
                "contentIndex": content_index,
                "delta": piece,
                "partial": output,
            }
        )
    return events


def _apply_usage(output: AssistantMessage, model: Model, usage: _Usage) -> None:
    prompt = usage.get("prompt_tokens") or 0
    details: _PromptDetails = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") or 0
    # prompt_tokens counts cached tokens too; completion_tokens already includes reasoning tokens.
    set_usage(
        output, model, max(0, prompt - cached), usage.get("completion_tokens") or 0, cached, 0
    )
