"""A decoder for the AWS binary event stream (``application/vnd.amazon.eventstream``).

Bedrock's ``converse-stream`` answers in this framing rather than SSE. Each message is a prelude
(total length, headers length, CRC32 of those 8 bytes), typed headers, a payload and a CRC32 of
everything before it. Both CRCs are checked: a corrupted stream must fail loudly, not turn into
a garbled answer. Only what Bedrock sends is decoded fully (string headers); other header types
are skipped by their documented sizes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

__all__ = ["EventStreamDecoder", "EventStreamError", "EventStreamMessage"]

_PRELUDE = 12
_MAX_MESSAGE = 16 * 1024 * 1024  # the service's documented limit; more means a broken stream
# Fixed value sizes of the header types (0 true, 1 false, 2 byte, 3 short, 4 int, 5 long,
# 8 timestamp, 9 uuid); 6 (bytes) and 7 (string) carry a 2-byte length.
_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}


class EventStreamError(ValueError):
    """The bytes are not a valid event stream (bad length or checksum)."""


@dataclass(frozen=True)
class EventStreamMessage:
    """One decoded message: its string headers and its payload bytes."""

    headers: dict[str, str]
    payload: bytes


class EventStreamDecoder:
    """Fed network chunks, returns the complete messages each one finishes."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        """Add ``chunk``; the messages now complete, in order.

        :raises EventStreamError: a length or checksum is wrong
        """
        self._buffer += chunk
        messages = []
        while len(self._buffer) >= _PRELUDE:
            total, headers_length, prelude_crc = struct.unpack_from(">III", self._buffer)
            if zlib.crc32(self._buffer[:8]) != prelude_crc:
                raise EventStreamError("event stream prelude checksum mismatch")
            if total < _PRELUDE + 4 + headers_length or total > _MAX_MESSAGE:
                raise EventStreamError(f"event stream message length {total} is invalid")
            if len(self._buffer) < total:
                break
            message = bytes(self._buffer[:total])
            del self._buffer[:total]
            (message_crc,) = struct.unpack_from(">I", message, total - 4)
            if zlib.crc32(message[:-4]) != message_crc:
                raise EventStreamError("event stream message checksum mismatch")
            headers_end = _PRELUDE + headers_length
            messages.append(
                EventStreamMessage(
                    _headers(message[_PRELUDE:headers_end]), message[headers_end : total - 4]
                )
            )
        return messages

    @property
    def pending(self) -> int:
        """Bytes of an incomplete message still buffered (non-zero at the end: a cut stream)."""
        return len(self._buffer)


def _headers(data: bytes) -> dict[str, str]:
    headers = {}
    position = 0
    try:
        while position < len(data):
            name_length = data[position]
            name = data[position + 1 : position + 1 + name_length].decode("utf-8")
            position += 1 + name_length
            kind = data[position]
            position += 1
            if kind in (6, 7):
                (length,) = struct.unpack_from(">H", data, position)
                position += 2
                if kind == 7:
                    headers[name] = data[position : position + length].decode("utf-8")
                position += length
            elif kind in _FIXED:
                position += _FIXED[kind]
            else:
                raise EventStreamError(f"event stream header type {kind} is unknown")
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise EventStreamError(f"event stream headers are malformed: {exc}") from exc
    return headers
