"""The OpenAI Responses API client (``api: "openai-responses"``), also used for Azure OpenAI.

The Responses stream is a sequence of typed events about *output items*, each numbered by
``output_index``: an item is announced (``response.output_item.added``), filled by deltas
(reasoning summary text, output text, function-call arguments) and completed
(``response.output_item.done``, carrying the whole item); ``response.completed`` ends the
response with its usage. Each item becomes one content block: ``reasoning`` a thinking block
(its summary is the thinking text; the complete item, with its encrypted content, is kept as the
block's signature so it can be sent back), ``message`` a text block (its id kept as the text
signature), ``function_call`` a tool call with the id ``call_id|item_id``.

Failures (an HTTP error status, ``response.failed``, an ``error`` event, a stream cut short)
end the stream with one ``error`` event like the other clients; retries of transient failures
happen in :func:`~knightcode._llm.transport.open_stream`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from typing import TypedDict, cast

import httpx

from knightcode._abort import AbortSignal
from knightcode._llm.http import make_client
from knightcode._llm.openai_responses_convert import build_responses_body, text_signature
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
from knightcode._types.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from knightcode._types.stream import AssistantMessageEvent

__all__ = ["Endpoint", "stream_openai_responses", "stream_responses"]


@dataclass(frozen=True)
class Endpoint:
    """Where and how one Responses request goes.

    :param url: the full ``…/responses`` URL, query included
    :param auth: the credential headers (sent only when there is a key)
    :param model_name: the body's ``model`` (Azure: the deployment name)
    :param reshape: changes the built body in place before it is sent (the ChatGPT backend's
        differences from the public API), None for none
    """

    url: str
    auth: Mapping[str, str]
    model_name: str
    reshape: Callable[[dict[str, object], Context], None] | None = None


EndpointFor = Callable[[Model, StreamOptions], Endpoint]
"""Resolves the endpoint of a request; raises :class:`StreamFailed` when it cannot."""


# The fields of the stream's events this client reads, all optional.
class _SummaryPart(TypedDict, total=False):
    text: str


class _ContentPart(TypedDict, total=False):
    type: str
    text: str
    refusal: str


class _Item(TypedDict, total=False):
    id: str
    type: str
    call_id: str
    name: str
    arguments: str
    summary: list[_SummaryPart]
    content: list[_ContentPart]
    encrypted_content: str | None
    phase: str | None


class _InputDetails(TypedDict, total=False):
    cached_tokens: int | None


class _Usage(TypedDict, total=False):
    input_tokens: int | None
    output_tokens: int | None
    input_tokens_details: _InputDetails | None


class _Error(TypedDict, total=False):
    code: str | None
    message: str | None


class _IncompleteDetails(TypedDict, total=False):
    reason: str | None


class _Response(TypedDict, total=False):
    id: str
    status: str
    usage: _Usage | None
    error: _Error | None
    incomplete_details: _IncompleteDetails | None


class _Event(TypedDict, total=False):
    type: str
    output_index: int
    summary_index: int
    item: _Item
    delta: str
    response: _Response
    code: str | None
    message: str | None


_load_event = cast(Callable[[str], _Event], parse_json)  # see openai_completions._load_chunk

_END_EVENTS = frozenset({"response.completed", "response.incomplete"})


def _openai_endpoint(model: Model, options: StreamOptions) -> Endpoint:
    return Endpoint(
        model.base_url.rstrip("/") + "/responses",
        {"authorization": f"Bearer {options.api_key}"},
        model.id,
    )


def stream_openai_responses(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    client: httpx.AsyncClient | None = None,
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """Stream one response of the OpenAI Responses API as provider-neutral events.

    Like every client: exactly one final ``done`` or ``error`` event, failures never raise.

    :param model: the model (``api`` "openai-responses"); requests go to ``{baseUrl}/responses``
    :param context: system prompt, messages and tools
    :param options: key, limits, thinking level, abort signal, hooks; defaults when None
    :param client: a shared ``httpx.AsyncClient``; a private one otherwise
    """
    return stream_responses(model, context, options, client=client, endpoint=_openai_endpoint)


async def stream_responses(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    client: httpx.AsyncClient | None = None,
    endpoint: EndpointFor = _openai_endpoint,
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """:func:`stream_openai_responses` for any endpoint that speaks the Responses API.

    :param endpoint: resolves the URL, credentials and model name (inside the stream, so a
        configuration problem becomes the stream's error event)
    """
    options = options or StreamOptions()
    output = new_assistant_message(model)
    signal = options.signal or AbortSignal()
    http = client if client is not None else make_client()
    body_chunks: AsyncGenerator[bytes, None] | None = None
    reader = _Reader(output)
    try:
        target = endpoint(model, options)
        body = build_responses_body(model, context, options, model_name=target.model_name)
        if target.reshape is not None:
            target.reshape(body, context)
        headers = request_headers(model, options, target.auth)
        response = await open_stream(http, target.url, headers, body, options, signal)
        yield {"type": "start", "partial": output}
        body_chunks = iter_body(response, signal)
        final: _Response | None = None
        async for payloads in iter_sse_data(body_chunks):
            for data in payloads:
                if final is not None:
                    continue  # keep draining so the connection can be reused
                event = _load_event(data)
                kind = event.get("type")
                if kind in _END_EVENTS:
                    final = event.get("response") or {}
                    continue
                for out in reader.handle(kind, event):
                    yield out
        if final is None:
            raise StreamFailed("terminated: the stream ended before the response was complete")
        response_id = final.get("id")
        if response_id:
            output["responseId"] = response_id
        usage = final.get("usage")
        if usage:
            _apply_usage(output, model, usage)
        stop, reason = _stop_reason(final, reader.has_tool_calls)
        for out in done_events(reader.closer, output, stop, provider_reason=reason):
            yield out
    except Exception as exc:
        reader.closer.finish_tool_calls()
        yield error_event(output, exc, signal, options.api_key)
    finally:
        await release(body_chunks, http if client is None else None)


class _Reader:
    """Turns the item events of one response into content blocks and stream events."""

    def __init__(self, output: AssistantMessage) -> None:
        self.output = output
        self.closer = BlockCloser(output)
        self.has_tool_calls = False
        self._blocks: dict[int, int] = {}  # output_index -> content index
        self._streamed_args: set[int] = set()  # content indexes that got argument deltas

    def handle(self, kind: str | None, event: _Event) -> list[AssistantMessageEvent]:
        """The stream events for one API event (most kinds give none).

        :raises StreamFailed: the API reported a failure
        """
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            return self._text_delta(event)
        if kind == "response.reasoning_summary_text.delta":
            return self._thinking_delta(event, event.get("delta") or "")
        if kind == "response.reasoning_text.delta":
            # The raw reasoning, which open-weight models served over this API (gpt-oss on
            # vLLM, llama.cpp …) stream instead of a summary.
            return self._thinking_delta(event, event.get("delta") or "")
        if kind == "response.function_call_arguments.delta":
            return self._arguments_delta(event)
        if kind == "response.output_item.added":
            return self._added(event)
        if kind == "response.output_item.done":
            return self._done(event)
        if kind == "response.reasoning_summary_part.added" and event.get("summary_index", 0) > 0:
            return self._thinking_delta(event, "\n\n")  # between summary parts
        if kind == "response.created":
            response_id = (event.get("response") or {}).get("id")
            if response_id:
                self.output["responseId"] = response_id
            return []
        if kind == "response.failed":
            raise StreamFailed(_failure_message(event.get("response") or {}))
        if kind == "error":
            raise StreamFailed(
                f"Error Code {event.get('code') or 'unknown'}: "
                f"{event.get('message') or 'no message'}"
            )
        return []

    def _index(self, event: _Event) -> int | None:
        return self._blocks.get(event.get("output_index", -1))

    def _added(self, event: _Event) -> list[AssistantMessageEvent]:
        item = event.get("item") or {}
        content = self.output["content"]
        kind = item.get("type")
        index = len(content)
        if kind == "reasoning":
            content.append({"type": "thinking", "thinking": ""})
            self.closer.open(index)
            started: AssistantMessageEvent = {
                "type": "thinking_start",
                "contentIndex": index,
                "partial": self.output,
            }
        elif kind == "message":
            content.append({"type": "text", "text": ""})
            self.closer.open(index)
            started = {"type": "text_start", "contentIndex": index, "partial": self.output}
        elif kind == "function_call":
            block: ToolCall = {
                "type": "toolCall",
                "id": f"{item.get('call_id') or ''}|{item.get('id') or ''}",
                "name": item.get("name") or "",
                "arguments": {},
            }
            content.append(block)
            self.closer.open_tool(index, block)
            self.has_tool_calls = True
            started = {
                "type": "toolcall_start",
                "contentIndex": index,
                "id": block["id"],
                "toolName": block["name"],
                "partial": self.output,
            }
        else:
            return []  # web search calls and other items this client does not use
        self._blocks[event.get("output_index", index)] = index
        return [started]

    def _text_delta(self, event: _Event) -> list[AssistantMessageEvent]:
        index = self._index(event)
        delta = event.get("delta") or ""
        if not delta:
            return []
        events: list[AssistantMessageEvent] = []
        if index is None:
            # A server that skips output_item.added for its message: open the text block here.
            events = self._added(
                {"output_index": event.get("output_index", -1), "item": {"type": "message"}}
            )
            index = self._index(event)
            if index is None:
                return events
        block = cast(TextContent, self.output["content"][index])
        # Dropping the dict's reference first lets CPython grow the string in place.
        acc = block["text"]
        block["text"] = ""
        acc += delta
        block["text"] = acc
        events.append(
            {"type": "text_delta", "contentIndex": index, "delta": delta, "partial": self.output}
        )
        return events

    def _thinking_delta(self, event: _Event, delta: str) -> list[AssistantMessageEvent]:
        index = self._index(event)
        if index is None or not delta:
            return []
        block = self.output["content"][index]
        if block["type"] != "thinking":
            return []
        acc = block["thinking"]
        block["thinking"] = ""
        acc += delta
        block["thinking"] = acc
        return [
            {
                "type": "thinking_delta",
                "contentIndex": index,
                "delta": delta,
                "partial": self.output,
            }
        ]

    def _arguments_delta(self, event: _Event) -> list[AssistantMessageEvent]:
        index = self._index(event)
        delta = event.get("delta") or ""
        if index is None or self.output["content"][index]["type"] != "toolCall":
            return []
        if delta:
            self.closer.add_arguments(index, delta)
            self._streamed_args.add(index)
        return [
            {
                "type": "toolcall_delta",
                "contentIndex": index,
                "delta": delta,
                "partial": self.output,
            }
        ]

    def _done(self, event: _Event) -> list[AssistantMessageEvent]:
        index = self._index(event)
        item = event.get("item") or {}
        if index is None:
            return []
        block = self.output["content"][index]
        if block["type"] == "thinking":
            return [self._end_thinking(index, block, item)]
        if block["type"] == "text":
            parts = item.get("content") or []
            text = "".join(part.get("text") or part.get("refusal") or "" for part in parts)
            if text:
                block["text"] = text  # the complete text, in case a delta went missing
            item_id = item.get("id")
            if item_id:
                block["textSignature"] = text_signature(item_id, item.get("phase"))
            return [self.closer.end_text(index)]
        if block["type"] == "toolCall":
            arguments = item.get("arguments")
            if arguments and index not in self._streamed_args:
                self.closer.add_arguments(index, arguments)  # sent whole, without deltas
            return [self.closer.end_tool(index)]
        return []

    def _end_thinking(
        self, index: int, block: ThinkingContent, item: _Item
    ) -> AssistantMessageEvent:
        summary = item.get("summary") or []
        if summary:
            block["thinking"] = "\n\n".join(part.get("text") or "" for part in summary)
        if item.get("encrypted_content") or summary:
            # The whole item goes back on the next request; the encrypted content is the
            # model's actual reasoning, which lets it continue its chain of thought.
            block["thinkingSignature"] = json.dumps(item, ensure_ascii=False)
        return self.closer.end_thinking(index)


def _failure_message(response: _Response) -> str:
    error = response.get("error")
    if error:
        return f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
    details = response.get("incomplete_details") or {}
    if details.get("reason"):
        return f"incomplete: {details.get('reason')}"
    return "Unknown error (no error details in response)"


def _stop_reason(response: _Response, has_tool_calls: bool) -> tuple[DoneReason | None, str]:
    """The stop reason for a finished response, and the provider's word for it."""
    status = response.get("status") or "completed"
    if status == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason") or "incomplete"
        if reason == "content_filter":
            return None, reason  # no usable answer
        return "length", reason
    if status in ("failed", "cancelled"):
        raise StreamFailed(_failure_message(response))
    return ("toolUse" if has_tool_calls else "stop"), status


def _apply_usage(output: AssistantMessage, model: Model, usage: _Usage) -> None:
    details: _InputDetails = usage.get("input_tokens_details") or {}
    cached = details.get("cached_tokens") or 0
    # input_tokens counts the cached tokens too; output_tokens includes the reasoning tokens.
    total_input = usage.get("input_tokens") or 0
    set_usage(output, model, max(0, total_input - cached), usage.get("output_tokens") or 0, cached)
