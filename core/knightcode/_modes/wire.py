"""Session events as JSON/RPC records (``spec/json.md``), and a writer for them.

The in-process events carry the cumulative partial message on every ``message_update``; on the
wire only the delta and the latest usage travel, so the stream stays linear in size.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import IO, TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from knightcode._types.events import SessionEvent

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

STREAMING_EVENTS = frozenset({"message_update", "tool_execution_update", "bash_execution_update"})
"""Records that come in bursts; the writer coalesces their flushes."""


def to_wire(event: dict[str, Any]) -> dict[str, Any]:
    """The record for an event: ``message_update`` reduced to ``usage`` + the delta event, every
    other event unchanged.
    """
    if event["type"] != "message_update":
        return event
    inner = event["assistantMessageEvent"]
    if "partial" in inner:
        inner = {key: value for key, value in inner.items() if key != "partial"}
    return {
        "type": "message_update",
        "usage": event["message"].get("usage"),
        "assistantMessageEvent": inner,
    }


def encode_record(record: dict[str, Any]) -> bytes:
    """One LF-terminated JSON record: compact, raw UTF-8 (U+2028/U+2029 included); a lone
    surrogate, which UTF-8 cannot carry, is escaped as ``\\udXXX`` like JavaScript does.
    """
    text = _encoder.encode(record)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        from knightcode._session.jsonl import encode_line

        return encode_line(record)


class RecordWriter:
    """Writes records to a binary stream (stdout), flushing promptly without a syscall per delta.

    A record of a burst kind is flushed on the next event-loop iteration, so a stream of deltas
    is written in large chunks while a lone record still leaves at once; every other record is
    flushed immediately.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno() if hasattr(stream, "fileno") else None
        self._stream = stream
        self._pending: list[bytes] = []
        self._scheduled = False

    def write(self, record: dict[str, Any]) -> None:
        self._pending.append(encode_record(record))
        if record.get("type") in STREAMING_EVENTS:
            if not self._scheduled:
                try:
                    asyncio.get_running_loop().call_soon(self.flush)
                    self._scheduled = True
                except RuntimeError:
                    self.flush()
        else:
            self.flush()

    def write_event(self, event: SessionEvent) -> None:
        """Write a session event in its wire form."""
        self.write(to_wire(cast(dict[str, Any], event)))

    def flush(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        try:
            if self._fd is not None:
                view = memoryview(data)
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
            else:
                self._stream.write(data)
                self._stream.flush()
        except BrokenPipeError:
            # The reader went away (e.g. `| head`); nobody is left to tell.
            self._fd = None
            self._stream = open(os.devnull, "wb")  # noqa: SIM115 - lives as long as the writer
