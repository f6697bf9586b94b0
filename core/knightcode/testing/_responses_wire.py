"""Rendering a :class:`Reply` as the OpenAI Responses API streams it (``POST …/responses``).

The same scripted replies play over this wire as over chat completions: thinking becomes a
``reasoning`` item whose summary streams as ``response.reasoning_summary_text.delta`` (and,
when the request asked for ``include: ["reasoning.encrypted_content"]``, carries an
``encrypted_content`` of ``enc-scripted-<serial>`` so tests can check it comes back), text an
assistant ``message`` item, each tool call a ``function_call`` item (item id
``fc_scripted_<serial>_<n>``) with its arguments streamed in the call's pieces; the response ends
with ``response.completed`` (``response.incomplete`` for ``finish="length"``) and the usage.
A stream error becomes ``response.failed``; an HTTP error gets the OpenAI error body.

Azure OpenAI speaks the same wire (``/openai/v1/responses?api-version=…``).
"""

from __future__ import annotations

import json

from knightcode.testing._render import _repeated, openai_error_body
from knightcode.testing._replies import Reply, ScriptUsage

__all__ = ["render_responses"]

Json = dict[str, object]


def _event(data: Json) -> bytes:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {data['type']}\ndata: {text}\n\n".encode()


def _usage(usage: ScriptUsage | None) -> Json:
    u = usage or ScriptUsage()
    prompt = u.input + u.cache_read + u.cache_write
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": u.cache_read},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + u.output,
    }


def _wants_encrypted(request: object) -> bool:
    include = request.get("include") if isinstance(request, dict) else None
    return isinstance(include, list) and "reasoning.encrypted_content" in include


class _Writer:
    """Numbers the events (``sequence_number``) as the API does."""

    def __init__(self) -> None:
        self.events: list[bytes] = []

    def add(self, kind: str, **fields: object) -> None:
        self.events.append(_event({"type": kind, "sequence_number": len(self.events), **fields}))


def _reasoning(out: _Writer, reply: Reply, index: int, serial: int, request: object) -> None:
    item_id = f"rs_scripted_{serial}"
    out.add(
        "response.output_item.added",
        output_index=index,
        item={"id": item_id, "type": "reasoning", "summary": []},
    )
    out.add(
        "response.reasoning_summary_part.added",
        item_id=item_id,
        output_index=index,
        summary_index=0,
        part={"type": "summary_text", "text": ""},
    )
    for piece in reply.thinking:
        out.add(
            "response.reasoning_summary_text.delta",
            item_id=item_id,
            output_index=index,
            summary_index=0,
            delta=piece,
        )
    text = "".join(reply.thinking)
    part = {"type": "summary_text", "text": text}
    out.add(
        "response.reasoning_summary_part.done",
        item_id=item_id,
        output_index=index,
        summary_index=0,
        part=part,
    )
    item: Json = {"id": item_id, "type": "reasoning", "summary": [part]}
    if _wants_encrypted(request):
        item["encrypted_content"] = f"enc-scripted-{serial}"
    out.add("response.output_item.done", output_index=index, item=item)


def _message(out: _Writer, reply: Reply, index: int, serial: int) -> None:
    item_id = f"msg_scripted_{serial}"
    item: Json = {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    out.add("response.output_item.added", output_index=index, item=item)
    empty = {"type": "output_text", "text": "", "annotations": []}
    out.add(
        "response.content_part.added",
        item_id=item_id,
        output_index=index,
        content_index=0,
        part=empty,
    )
    where: Json = {"item_id": item_id, "output_index": index, "content_index": 0}
    if reply.repeat:
        # deltas_reply: one pre-encoded event in large blocks (benchmarks measure the client).
        delta = {"type": "response.output_text.delta", **where, "delta": reply.text[0]}
        out.events.extend(_repeated(_event(delta), reply.repeat))
        text = reply.text[0] * reply.repeat
    else:
        for piece in reply.text:
            out.add("response.output_text.delta", **where, delta=piece)
        text = "".join(reply.text)
    part = {"type": "output_text", "text": text, "annotations": []}
    out.add(
        "response.output_text.done",
        item_id=item_id,
        output_index=index,
        content_index=0,
        text=part["text"],
    )
    out.add(
        "response.content_part.done",
        item_id=item_id,
        output_index=index,
        content_index=0,
        part=part,
    )
    out.add(
        "response.output_item.done",
        output_index=index,
        item={**item, "status": "completed", "content": [part]},
    )


def _calls(out: _Writer, reply: Reply, first_index: int, serial: int) -> None:
    for number, call in enumerate(reply.tool_calls):
        index = first_index + number
        item: Json = {
            "id": f"fc_scripted_{serial}_{number}",
            "type": "function_call",
            "status": "in_progress",
            "call_id": call.id,
            "name": call.name,
            "arguments": "",
        }
        out.add("response.output_item.added", output_index=index, item=item)
        for piece in call.pieces():
            out.add(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=index,
                delta=piece,
            )
        out.add(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=index,
            arguments=call.arguments,
        )
        out.add(
            "response.output_item.done",
            output_index=index,
            item={**item, "status": "completed", "arguments": call.arguments},
        )


def responses_events(reply: Reply, request: object, serial: int, model: str) -> list[bytes]:
    """The SSE body of a streamed Responses API answer."""
    out = _Writer()
    response: Json = {
        "id": f"resp_scripted_{serial}",
        "object": "response",
        "status": "in_progress",
        "model": model,
        "output": [],
    }
    out.add("response.created", response=response)
    out.add("response.in_progress", response=response)
    index = 0
    if reply.thinking:
        _reasoning(out, reply, index, serial, request)
        index += 1
    if reply.text:
        _message(out, reply, index, serial)
        index += 1
    _calls(out, reply, index, serial)
    if reply.stream_error is not None:
        error = {"code": reply.error_type or "server_error", "message": reply.stream_error}
        out.add("response.failed", response={**response, "status": "failed", "error": error})
        return out.events
    final: Json = {**response, "usage": _usage(reply.usage)}
    if reply.finish == "length":
        final["status"] = "incomplete"
        final["incomplete_details"] = {"reason": "max_output_tokens"}
        out.add("response.incomplete", response=final)
    else:
        final["status"] = "completed"
        out.add("response.completed", response=final)
    return out.events


def render_responses(
    reply: Reply, request: object, serial: int, model: str
) -> list[bytes] | tuple[int, bytes, str]:
    """The answer to one ``…/responses`` request: the SSE events of a stream, or
    ``(status, body, content type)`` for an HTTP error or a request that did not ask to stream
    (the scripted server only streams this API).
    """
    if reply.status >= 400:
        return reply.status, openai_error_body(reply), "application/json"
    if not (isinstance(request, dict) and request.get("stream")):
        body = {"error": {"message": "the scripted server streams Responses only", "type": "x"}}
        return 400, json.dumps(body).encode(), "application/json"
    return responses_events(reply, request, serial, model)
