"""Scripted replies: what the :class:`~knightcode.testing.ScriptedServer` answers, request by
request.

A :class:`Reply` is provider-neutral (thinking, text, tool calls, usage, a finish reason, or an
HTTP error); the server renders it as OpenAI chat-completions, Anthropic messages, Gemini or
Bedrock Converse depending on the endpoint the request came to. Build replies with the
module-level functions rather than the class: :func:`text_reply`, :func:`reply`,
:func:`tool_call_reply` with :func:`tool_call`, :func:`error_reply`, :func:`stream_error_reply`,
:func:`drop_reply`, :func:`deltas_reply`, :func:`raw_reply`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Reply",
    "ScriptUsage",
    "ToolCallSpec",
    "deltas_reply",
    "drop_reply",
    "error_reply",
    "raw_reply",
    "reply",
    "stream_error_reply",
    "text_reply",
    "tool_call",
    "tool_call_reply",
    "usage",
]

Finish = Literal["stop", "length", "tool_calls"]


@dataclass(frozen=True)
class ScriptUsage:
    """Token counts a reply reports.

    ``input`` counts uncached prompt tokens; OpenAI's ``prompt_tokens`` is rendered as
    ``input + cache_read + cache_write`` with ``prompt_tokens_details.cached_tokens = cache_read``;
    Anthropic gets the four numbers as they are.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


def usage(
    input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0
) -> ScriptUsage:
    """Token counts for a reply's ``usage=``."""
    return ScriptUsage(input, output, cache_read, cache_write)


@dataclass(frozen=True)
class ToolCallSpec:
    """One scripted tool call; ``arguments`` is the JSON text, streamed in ``split`` pieces."""

    id: str
    name: str
    arguments: str
    split: int = 1

    def pieces(self) -> list[str]:
        """The arguments text cut into ``split`` nearly equal pieces (never empty pieces)."""
        count = max(1, min(self.split, len(self.arguments) or 1))
        size, extra = divmod(len(self.arguments), count)
        out, start = [], 0
        for index in range(count):
            end = start + size + (1 if index < extra else 0)
            out.append(self.arguments[start:end])
            start = end
        return out


def tool_call(
    call_id: str, name: str, arguments: Mapping[str, object] | str | None = None, split: int = 1
) -> ToolCallSpec:
    """A tool call for :func:`tool_call_reply`.

    :param arguments: a dict (serialised as JSON) or the exact JSON text to send, which may be
        deliberately invalid
    :param split: in how many chunks the arguments text is streamed
    """
    text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments or {}))
    return ToolCallSpec(call_id, name, text, split)


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Create it with the builder functions of this module."""

    thinking: tuple[str, ...] = ()
    text: tuple[str, ...] = ()
    tool_calls: tuple[ToolCallSpec, ...] = ()
    interleave: bool = False
    usage: ScriptUsage | None = None
    finish: Finish | None = None
    delay: float = 0.0
    drop_after: int | None = None
    stream_error: str | None = None
    status: int = 200
    error_message: str = ""
    error_type: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    repeat: int = 0  # deltas_reply: that many identical text deltas of text[0]
    raw: bytes | None = None
    content_type: str = "text/event-stream"

    @property
    def finish_reason(self) -> Finish:
        """The finish reason sent: as given, else ``tool_calls`` when there are calls."""
        if self.finish is not None:
            return self.finish
        return "tool_calls" if self.tool_calls else "stop"


def _strings(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def reply(
    *,
    thinking: str | Iterable[str] | None = None,
    text: str | Iterable[str] | None = None,
    tool_calls: Iterable[ToolCallSpec] = (),
    usage: ScriptUsage | None = None,
    finish: Finish | None = None,
    delay: float = 0.0,
    interleave: bool = False,
    drop_after: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """A streamed answer: thinking chunks, then text chunks, then tool calls.

    :param thinking: thinking chunks (OpenAI: ``reasoning_content`` deltas; Anthropic: a
        ``thinking`` block with a signature)
    :param text: text chunks, one delta each
    :param tool_calls: calls made with :func:`tool_call`
    :param usage: token counts for the final usage report (zeros when None)
    :param finish: ``"stop"``, ``"length"`` or ``"tool_calls"`` (default: by content)
    :param delay: seconds to sleep before each streamed event
    :param interleave: OpenAI: send the calls' argument pieces round-robin by ``index``
    :param drop_after: close the socket abruptly after this many SSE events
    :param headers: extra response headers
    """
    return Reply(
        thinking=_strings(thinking),
        text=_strings(text),
        tool_calls=tuple(tool_calls),
        interleave=interleave,
        usage=usage,
        finish=finish,
        delay=delay,
        drop_after=drop_after,
        headers=dict(headers or {}),
    )


def text_reply(
    *chunks: str, usage: ScriptUsage | None = None, finish: Finish = "stop", delay: float = 0.0
) -> Reply:
    """A streamed text answer, one delta per chunk."""
    return reply(text=chunks, usage=usage, finish=finish, delay=delay)


def tool_call_reply(
    calls: Iterable[ToolCallSpec],
    text: str | Iterable[str] | None = None,
    usage: ScriptUsage | None = None,
    *,
    thinking: str | Iterable[str] | None = None,
    interleave: bool = False,
    delay: float = 0.0,
) -> Reply:
    """An answer that calls tools (finish reason ``tool_calls``), optionally after some text."""
    return reply(
        thinking=thinking,
        text=text,
        tool_calls=calls,
        usage=usage,
        delay=delay,
        interleave=interleave,
    )


def error_reply(
    status: int,
    message: str = "",
    headers: Mapping[str, str] | None = None,
    *,
    error_type: str | None = None,
) -> Reply:
    """An HTTP error: ``status`` with the dialect's error body carrying ``message``.

    An empty ``message`` sends an empty body (Cerebras' "400 (no body)" overflow). Use
    ``headers={"retry-after": "2"}`` for rate limits.
    """
    return Reply(
        status=status, error_message=message, error_type=error_type, headers=dict(headers or {})
    )


def stream_error_reply(
    message: str, *, text: Iterable[str] = (), error_type: str = "overloaded_error"
) -> Reply:
    """A 200 stream that reports an error event after ``text`` (Anthropic ``event: error``;
    OpenAI ``data: {"error": …}``).
    """
    return Reply(text=tuple(text), stream_error=message, error_type=error_type)


def drop_reply(
    after_chunks: int = 1, *, text: Iterable[str] | None = None, delay: float = 0.0
) -> Reply:
    """Send ``after_chunks`` SSE events of a text answer, then close the socket abruptly (no
    final chunk, no ``[DONE]``).
    """
    chunks = (
        tuple(text) if text is not None else tuple(f"part{i} " for i in range(after_chunks + 8))
    )
    return Reply(text=chunks, drop_after=after_chunks, delay=delay)


def deltas_reply(n: int, text: str = "x", usage: ScriptUsage | None = None) -> Reply:
    """``n`` identical text deltas, pre-encoded and written in large blocks so that the server
    sustains millions of deltas per second (benchmarks measure the client, not the server).
    """
    return Reply(text=(text,), repeat=n, usage=usage)


def raw_reply(
    body: bytes | str,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    content_type: str = "text/event-stream",
) -> Reply:
    """Exactly these bytes as the response body (for malformed or unusual streams)."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    return Reply(raw=data, status=status, headers=dict(headers or {}), content_type=content_type)
