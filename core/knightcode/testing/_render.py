"""Rendering a provider-neutral :class:`Reply` in the OpenAI or the Anthropic dialect.

Each ``*_events`` function returns the response body as a list of byte strings, one per SSE
event (the server may sleep between them or cut the connection after some); a
:func:`~knightcode.testing.deltas_reply` body is returned as a few large blocks instead.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from knightcode.testing._replies import Reply, ScriptUsage

__all__ = [
    "anthropic_error_body",
    "anthropic_events",
    "anthropic_json",
    "openai_error_body",
    "openai_events",
    "openai_json",
]

_BLOCK = 64 * 1024

Json = dict[str, object]
"""A JSON object being built for a response body."""
Chunk = Callable[[Json], bytes]
"""Renders one ``chat.completion.chunk`` event around a delta."""

_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    429: "rate_limit_exceeded",
}


def _dumps(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _repeated(event: bytes, count: int) -> Iterator[bytes]:
    per_block = max(1, _BLOCK // len(event))
    block = event * per_block
    full, rest = divmod(count, per_block)
    for _ in range(full):
        yield block
    if rest:
        yield event * rest


# --- OpenAI chat completions ---


def _openai_usage(usage: ScriptUsage | None) -> Json:
    u = usage or ScriptUsage()
    prompt = u.input + u.cache_read + u.cache_write
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u.output,
        "total_tokens": prompt + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read},
    }


def _wants_usage(request: object) -> bool:
    options = request.get("stream_options") if isinstance(request, dict) else None
    return isinstance(options, dict) and bool(options.get("include_usage"))


def openai_events(reply: Reply, request: object, serial: int, model: str) -> list[bytes]:
    """The SSE body of a streamed chat completion."""
    base: Json = {
        "id": f"chatcmpl-scripted-{serial}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: Json, finish: str | None = None) -> bytes:
        body = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + _dumps(body) + b"\n\n"

    events: list[bytes] = []
    role: Json = {"role": "assistant"}  # sent with the first delta, as OpenAI does
    for piece in reply.thinking:
        events.append(chunk({**role, "reasoning_content": piece}))
        role = {}
    if reply.repeat:
        events.append(chunk({**role, "content": ""}))
        events.extend(_repeated(chunk({"content": reply.text[0]}), reply.repeat))
        role = {}
    else:
        for piece in reply.text:
            events.append(chunk({**role, "content": piece}))
            role = {}
    events.extend(_openai_tool_chunks(reply, chunk, role))
    if reply.stream_error is not None:
        error = {
            "error": {"message": reply.stream_error, "type": reply.error_type or "server_error"}
        }
        events.append(b"data: " + _dumps(error) + b"\n\n")
        return events
    events.append(chunk({}, reply.finish_reason))
    if _wants_usage(request):
        events.append(
            b"data: "
            + _dumps({**base, "choices": [], "usage": _openai_usage(reply.usage)})
            + b"\n\n"
        )
    events.append(b"data: [DONE]\n\n")
    return events


def _openai_tool_chunks(reply: Reply, chunk: Chunk, role: Json) -> list[bytes]:
    calls = reply.tool_calls
    if not calls:
        return []
    pieces = [call.pieces() for call in calls]
    # (call index, piece index) in sending order: call by call, or round-robin when interleaved.
    order: list[tuple[int, int]]
    if reply.interleave:
        longest = max(len(p) for p in pieces)
        order = [(c, i) for i in range(longest) for c in range(len(calls)) if i < len(pieces[c])]
    else:
        order = [(c, i) for c in range(len(calls)) for i in range(len(pieces[c]))]
    out = []
    for call_index, piece_index in order:
        call = calls[call_index]
        entry: Json = {
            "index": call_index,
            "function": {"arguments": pieces[call_index][piece_index]},
        }
        if piece_index == 0:
            entry = {
                "index": call_index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": pieces[call_index][0]},
            }
        out.append(chunk({**role, "tool_calls": [entry]}))
        role = {}
    return out


def openai_json(reply: Reply, serial: int, model: str) -> bytes:
    """The body of a non-streamed chat completion."""
    message: Json = {
        "role": "assistant",
        "content": "".join(reply.text * max(1, reply.repeat)) or None,
    }
    if reply.thinking:
        message["reasoning_content"] = "".join(reply.thinking)
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    return _dumps(
        {
            "id": f"chatcmpl-scripted-{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": _openai_usage(reply.usage),
        }
    )


def openai_error_body(reply: Reply) -> bytes:
    """An OpenAI-style error body (empty when the reply has no message)."""
    if not reply.error_message:
        return b""
    kind = reply.error_type or _OPENAI_ERROR_TYPES.get(reply.status, "server_error")
    return _dumps(
        {"error": {"message": reply.error_message, "type": kind, "param": None, "code": kind}}
    )


# --- Anthropic messages ---


def _sse(kind: str, data: Mapping[str, object]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + _dumps(data) + b"\n\n"


def _anthropic_usage(usage: ScriptUsage | None) -> dict[str, int]:
    u = usage or ScriptUsage()
    return {
        "input_tokens": u.input,
        "cache_creation_input_tokens": u.cache_write,
        "cache_read_input_tokens": u.cache_read,
        "output_tokens": u.output,
    }


def anthropic_events(reply: Reply, serial: int, model: str) -> list[bytes]:
    """The SSE body of a streamed Anthropic message."""
    start_usage = {**_anthropic_usage(reply.usage), "output_tokens": 1}
    message: Json = {
        "id": f"msg_scripted_{serial}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    events = [
        _sse("message_start", {"type": "message_start", "message": message}),
        _sse("ping", {"type": "ping"}),
    ]
    index = 0

    def block(start: Json, deltas: Sequence[Mapping[str, object]]) -> None:
        nonlocal index
        events.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        for delta in deltas:
            events.append(
                _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    if reply.thinking:
        deltas = [{"type": "thinking_delta", "thinking": t} for t in reply.thinking]
        deltas.append({"type": "signature_delta", "signature": f"scripted-signature-{serial}"})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if reply.repeat:
        events.append(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        delta = {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": reply.text[0]},
        }
        events.extend(_repeated(_sse("content_block_delta", delta), reply.repeat))
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    elif reply.text:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": t} for t in reply.text])
    for call in reply.tool_calls:
        block(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in call.pieces()],
        )
    if reply.stream_error is not None:
        error = {
            "type": "error",
            "error": {
                "type": reply.error_type or "overloaded_error",
                "message": reply.stream_error,
            },
        }
        events.append(_sse("error", error))
        return events
    events.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": _ANTHROPIC_STOP[reply.finish_reason],
                    "stop_sequence": None,
                },
                "usage": _anthropic_usage(reply.usage),
            },
        )
    )
    events.append(_sse("message_stop", {"type": "message_stop"}))
    return events


def anthropic_json(reply: Reply, serial: int, model: str) -> bytes:
    """The body of a non-streamed Anthropic message."""
    content: list[Json] = []
    if reply.thinking:
        content.append(
            {
                "type": "thinking",
                "thinking": "".join(reply.thinking),
                "signature": f"scripted-signature-{serial}",
            }
        )
    if reply.text:
        content.append({"type": "text", "text": "".join(reply.text * max(1, reply.repeat))})
    for call in reply.tool_calls:
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            arguments = {}
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    return _dumps(
        {
            "id": f"msg_scripted_{serial}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": _ANTHROPIC_STOP[reply.finish_reason],
            "stop_sequence": None,
            "usage": _anthropic_usage(reply.usage),
        }
    )


def anthropic_error_body(reply: Reply) -> bytes:
    """An Anthropic-style error body (empty when the reply has no message)."""
    if not reply.error_message:
        return b""
    kind = reply.error_type or _ANTHROPIC_ERROR_TYPES.get(reply.status, "api_error")
    return _dumps({"type": "error", "error": {"type": kind, "message": reply.error_message}})
