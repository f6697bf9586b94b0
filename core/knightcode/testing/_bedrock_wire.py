"""The Amazon Bedrock wire format of the scripted server (``/model/{id}/converse-stream``).

The answer is an AWS binary event stream (``application/vnd.amazon.eventstream``): each event a
message with a prelude (total and header lengths, CRC32), string headers (``:event-type``,
``:message-type``, ``:content-type``), a JSON payload and a CRC32 of the whole message. A
:class:`~knightcode.testing._replies.Reply` becomes the Converse events Bedrock sends: text
blocks get no ``contentBlockStart`` (only deltas), tool-use blocks do; reasoning arrives as
``reasoningContent`` deltas ending with a signature; then ``messageStop`` and ``metadata``.
"""

from __future__ import annotations

import json
import struct
import zlib

from knightcode.testing._replies import Reply

__all__ = ["CONTENT_TYPE", "encode_message", "error_body", "events", "is_bedrock_path"]

CONTENT_TYPE = "application/vnd.amazon.eventstream"
_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
_ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}


def is_bedrock_path(path: str) -> bool:
    """Whether a POST path is a Bedrock Converse streaming request."""
    return "/model/" in path and path.endswith("/converse-stream")


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message with string headers and both CRCs."""
    encoded = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        encoded += struct.pack(">B", len(raw_name)) + raw_name
        encoded += struct.pack(">BH", 7, len(raw_value)) + raw_value  # 7: string
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _event(kind: str, data: dict[str, object]) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps(data, ensure_ascii=False).encode("utf-8"))


def events(reply: Reply, serial: int) -> list[bytes]:
    """The event-stream body of one Converse stream."""
    out = [_event("messageStart", {"role": "assistant"})]
    index = 0
    if reply.thinking:
        for text in reply.thinking:
            out.append(
                _event(
                    "contentBlockDelta",
                    {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": text}}},
                )
            )
        out.append(
            _event(
                "contentBlockDelta",
                {
                    "contentBlockIndex": index,
                    "delta": {"reasoningContent": {"signature": f"scripted-signature-{serial}"}},
                },
            )
        )
        out.append(_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    texts = reply.text * reply.repeat if reply.repeat else reply.text
    if texts:
        for text in texts:
            out.append(
                _event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": text}})
            )
        out.append(_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    for call in reply.tool_calls:
        out.append(
            _event(
                "contentBlockStart",
                {
                    "contentBlockIndex": index,
                    "start": {"toolUse": {"toolUseId": call.id, "name": call.name}},
                },
            )
        )
        for piece in call.pieces():
            out.append(
                _event(
                    "contentBlockDelta",
                    {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}},
                )
            )
        out.append(_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    if reply.stream_error is not None:
        kind = reply.error_type or ""
        headers = {
            # another dialect's type name (stream_error_reply's default) becomes Bedrock's own
            ":exception-type": kind if kind.endswith("Exception") else "modelStreamErrorException",
            ":content-type": "application/json",
            ":message-type": "exception",
        }
        out.append(encode_message(headers, json.dumps({"message": reply.stream_error}).encode()))
        return out
    out.append(_event("messageStop", {"stopReason": _STOP[reply.finish_reason]}))
    usage = reply.usage
    counts = {
        "inputTokens": usage.input if usage else 0,
        "outputTokens": usage.output if usage else 0,
        "cacheReadInputTokens": usage.cache_read if usage else 0,
        "cacheWriteInputTokens": usage.cache_write if usage else 0,
    }
    counts["totalTokens"] = sum(counts.values())
    out.append(_event("metadata", {"usage": counts, "metrics": {"latencyMs": 1}}))
    return out


def error_body(reply: Reply) -> tuple[bytes, dict[str, str]]:
    """An AWS JSON error body and its ``x-amzn-ErrorType`` header."""
    kind = reply.error_type or _ERROR_TYPES.get(reply.status, "InternalServerException")
    body = json.dumps({"message": reply.error_message}).encode() if reply.error_message else b""
    return body, {"x-amzn-ErrorType": kind}
