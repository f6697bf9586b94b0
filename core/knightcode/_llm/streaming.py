"""Pieces both wire clients share: closing content blocks, tool-call arguments, final events."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterator, Mapping
from typing import Literal, cast

import httpx

from knightcode._abort import Aborted, AbortSignal
from knightcode._llm.transport import StreamFailed, describe_transport_error
from knightcode._llm.types import Model, StreamOptions
from knightcode._types.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from knightcode._types.stream import AssistantMessageEvent, ErrorEvent

__all__ = [
    "BlockCloser",
    "DoneReason",
    "done_events",
    "error_event",
    "parse_arguments",
    "release",
    "request_headers",
]

DoneReason = Literal["stop", "length", "toolUse"]
"""The stop reasons of a complete response (what a client maps the provider's reason to)."""


def request_headers(
    model: Model, options: StreamOptions, auth: Mapping[str, str]
) -> dict[str, str]:
    """Request headers: JSON/SSE, the credentials (only when there is a key), then the model's
    and the caller's extra headers. Names are lower-cased so a configured header replaces ours
    instead of being sent twice.
    """
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if options.api_key:
        headers.update({name.lower(): value for name, value in auth.items()})
    for extra in (model.headers, options.headers):
        for name, value in extra.items():
            headers[name.lower()] = value
    return headers


def parse_arguments(raw: str) -> dict[str, object]:
    """Tool-call arguments from their JSON text; a truncated text is closed and parsed on a
    best-effort basis (like the reference's partial-JSON parser); anything else gives ``{}``.
    """
    if not raw or raw.isspace():
        return {}
    value: object
    try:
        value = json.loads(raw)
    except ValueError:
        try:
            value = json.loads(_close_json(raw))
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _close_json(raw: str) -> str:
    """Append what a JSON text cut off in the middle is missing (quotes, brackets)."""
    stack: list[str] = []
    in_string = False
    escaped = False
    for char in raw:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and stack:
            stack.pop()
    text = raw
    if in_string:
        if escaped:
            text = text[:-1]
        text += '"'
    text = text.rstrip()
    if text.endswith(","):
        text = text[:-1]
    elif text.endswith(":"):
        text += "null"
    return text + "".join(reversed(stack))


class BlockCloser:
    """Knows which content blocks of a message are still open and produces their end events.

    Text and thinking blocks close when another kind of block starts; tool calls may interleave,
    so they stay open until the response finishes. Arguments text is kept here, outside the
    message, because the stored ``toolCall`` block holds only parsed ``arguments``.
    """

    __slots__ = ("_message", "_open", "_raw", "_tool_index")

    def __init__(self, message: AssistantMessage) -> None:
        self._message = message
        self._open: dict[int, str] = {}  # content index -> block type
        self._raw: dict[int, list[str]] = {}  # content index -> argument pieces
        self._tool_index: dict[int, int] = {}  # id(block) -> content index

    def open(self, index: int) -> None:
        """Register an opened text or thinking block."""
        self._open[index] = self._message["content"][index]["type"]

    def open_tool(self, index: int, block: ToolCall) -> None:
        """Register an opened tool-call block."""
        self._open[index] = "toolCall"
        self._raw[index] = []
        self._tool_index[id(block)] = index

    def index_of(self, block: ToolCall) -> int:
        """The content index of an open tool-call block."""
        return self._tool_index[id(block)]

    def add_arguments(self, index: int, piece: str) -> None:
        """Collect a piece of the arguments text of the tool call at content ``index``.

        :raises KeyError: no tool call is open there
        """
        self._raw[index].append(piece)

    def end_text(self, index: int) -> AssistantMessageEvent:
        """Close the text block at ``index``."""
        del self._open[index]
        block = cast(TextContent, self._message["content"][index])  # open() recorded a text block
        return {
            "type": "text_end",
            "contentIndex": index,
            "content": block["text"],
            "partial": self._message,
        }

    def end_thinking(self, index: int) -> AssistantMessageEvent:
        """Close the thinking block at ``index``."""
        del self._open[index]
        block = cast(ThinkingContent, self._message["content"][index])  # opened as thinking
        return {
            "type": "thinking_end",
            "contentIndex": index,
            "content": block["thinking"],
            "partial": self._message,
        }

    def end_tool(self, index: int) -> AssistantMessageEvent:
        """Close the tool call at ``index``: parse its arguments."""
        del self._open[index]
        block = cast(ToolCall, self._message["content"][index])  # open_tool() recorded it
        raw = "".join(self._raw.pop(index, ()))
        if raw:  # no pieces: keep the arguments the block started with
            block["arguments"] = parse_arguments(raw)
        return {
            "type": "toolcall_end",
            "contentIndex": index,
            "toolCall": block,
            "partial": self._message,
        }

    def end(self, index: int) -> AssistantMessageEvent | None:
        """Close whatever block is open at ``index`` (None when none is)."""
        kind = self._open.get(index)
        if kind == "text":
            return self.end_text(index)
        if kind == "thinking":
            return self.end_thinking(index)
        if kind == "toolCall":
            return self.end_tool(index)
        return None

    def end_all(self) -> list[AssistantMessageEvent]:
        """Close every open block, in content order."""
        events = []
        for index in sorted(self._open):
            event = self.end(index)
            if event is not None:
                events.append(event)
        return events

    def finish_tool_calls(self) -> None:
        """On failure: give unfinished tool calls the arguments received so far (no events)."""
        for index, kind in list(self._open.items()):
            if kind == "toolCall":
                block = cast(ToolCall, self._message["content"][index])
                raw = "".join(self._raw.pop(index, ()))
                if raw:
                    block["arguments"] = parse_arguments(raw)
        self._open.clear()


def error_event(
    output: AssistantMessage, exc: BaseException, signal: AbortSignal, api_key: str | None
) -> ErrorEvent:
    """The final ``error`` event for a stream that failed with ``exc`` (or was aborted)."""
    retry_after: int | None = None
    reason: Literal["error", "aborted"]
    if isinstance(exc, Aborted) or signal.aborted:
        reason = "aborted"
        message = "Request was aborted"
    else:
        reason = "error"
        if isinstance(exc, StreamFailed):
            message = str(exc)
            retry_after = exc.retry_after_ms
        elif isinstance(exc, httpx.HTTPError):
            message = describe_transport_error(exc, mid_stream=True)
        elif isinstance(exc, ValueError):
            message = f"Invalid response from the provider: {exc}"
        else:
            message = f"{type(exc).__name__}: {exc}"
    if api_key and len(api_key) >= 8 and api_key in message:
        message = message.replace(api_key, "***")  # a key must never reach a log or session
    output["stopReason"] = reason
    output["errorMessage"] = message
    event: ErrorEvent = {"type": "error", "reason": reason, "error": output}
    if retry_after is not None:
        event["retryAfterMs"] = retry_after
    return event


def done_events(
    closer: BlockCloser,
    output: AssistantMessage,
    stop: DoneReason | None,
    *,
    provider_reason: str | None,
) -> Iterator[AssistantMessageEvent]:
    """The events that end a complete stream: open blocks closed, then ``done`` with ``stop``.

    :param stop: the mapped stop reason, or None when the provider's reason (``provider_reason``)
        means no usable answer (e.g. a content filter)
    :raises StreamFailed: for such an unusable stop reason, after the block ends were yielded
    """
    yield from closer.end_all()
    if stop is None:
        raise StreamFailed(f"The provider stopped the response: {provider_reason}")
    output["stopReason"] = stop
    yield {"type": "done", "reason": stop, "message": output}


async def release(
    body_chunks: AsyncGenerator[bytes, None] | None, owned: httpx.AsyncClient | None
) -> None:
    """Free what one streamed request held: the response body, and the HTTP client when the
    stream created its own.
    """
    if body_chunks is not None:
        # A consumer that stopped early leaves the body generator suspended: close it (and with
        # it the response) now rather than whenever the garbage collector gets to it.
        await body_chunks.aclose()
    if owned is not None:
        await owned.aclose()
