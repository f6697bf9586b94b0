"""The Gemini wire format of the scripted server (``:streamGenerateContent?alt=sse``).

A :class:`~knightcode.testing._replies.Reply` becomes a stream of ``GenerateContentResponse``
events as Gemini sends them: thought parts (``thought: true``, the last with a base64
``thoughtSignature``), text parts, whole ``functionCall`` parts (the first carrying the turn's
signature, as Gemini 3 does), then ``finishReason`` and ``usageMetadata``. A call scripted with
an empty id is sent without one, as most Gemini models do.
"""

from __future__ import annotations

import base64
import json

from knightcode.testing._replies import Reply

__all__ = ["error_body", "events", "is_gemini_path", "signature"]

_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP"}
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def is_gemini_path(path: str) -> bool:
    """Whether a POST path (query string removed) is a Gemini streaming request."""
    return path.endswith(":streamGenerateContent")


def signature(serial: int) -> str:
    """The thought signature sent with response number ``serial`` (base64, as Gemini's are)."""
    return base64.b64encode(f"scripted-signature-{serial}".encode()).decode()


def _event(data: dict[str, object]) -> bytes:
    return b"data: " + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\r\n\r\n"


def _chunk(parts: list[dict[str, object]], serial: int) -> bytes:
    return _event(
        {
            "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
            "responseId": f"gemini-scripted-{serial}",
        }
    )


def _arguments(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return {}  # Gemini sends objects; a deliberately broken script sends an empty one


def events(reply: Reply, serial: int) -> list[bytes]:
    """The SSE body of one streamed Gemini response."""
    out: list[bytes] = []
    for index, text in enumerate(reply.thinking):
        part: dict[str, object] = {"text": text, "thought": True}
        if index == len(reply.thinking) - 1:
            part["thoughtSignature"] = signature(serial)
        out.append(_chunk([part], serial))
    texts = reply.text * reply.repeat if reply.repeat else reply.text
    out.extend(_chunk([{"text": text}], serial) for text in texts)
    for index, call in enumerate(reply.tool_calls):
        function: dict[str, object] = {"name": call.name, "args": _arguments(call.arguments)}
        if call.id:
            function["id"] = call.id
        part = {"functionCall": function}
        if index == 0 and reply.thinking:
            part["thoughtSignature"] = signature(serial)
        out.append(_chunk([part], serial))
    if reply.stream_error is not None:
        out.append(
            _event({"error": {"code": 503, "message": reply.stream_error, "status": "UNAVAILABLE"}})
        )
        return out
    usage = reply.usage
    metadata = {
        "promptTokenCount": (usage.input + usage.cache_read) if usage else 0,
        "candidatesTokenCount": usage.output if usage else 0,
        "totalTokenCount": (usage.input + usage.cache_read + usage.output) if usage else 0,
    }
    if usage and usage.cache_read:
        metadata["cachedContentTokenCount"] = usage.cache_read
    out.append(
        _event(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": ""}]},
                        "finishReason": _FINISH[reply.finish_reason],
                        "index": 0,
                    }
                ],
                "usageMetadata": metadata,
                "responseId": f"gemini-scripted-{serial}",
            }
        )
    )
    return out


def error_body(reply: Reply) -> bytes:
    """A Google API error body (empty when the reply has no message)."""
    if not reply.error_message:
        return b""
    status = reply.error_type or _STATUS.get(reply.status, "UNKNOWN")
    error = {"code": reply.status, "message": reply.error_message, "status": status}
    return json.dumps({"error": error}).encode("utf-8")
