"""Session events as JSON/RPC records (``spec/json.md``), and a writer for them.

The in-process events carry the cumulative partial message on every ``message_update``; on the
wire only the delta and the latest usage travel, so the stream stays linear in size.

Records are encoded by the session files' writer (:mod:`knightcode._session.jsonl`), so the
stream spells every value exactly as JavaScript's ``JSON.stringify`` does, numbers included.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._types.events import SessionEvent

from knightcode._session import jsonl

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

_PIPE_BYTES = 1 << 20

STREAMING_EVENTS = frozenset({"message_update", "tool_execution_update", "bash_execution_update"})
"""Records that come in bursts; the writer coalesces their flushes."""


def to_wire(event: SessionEvent) -> Mapping[str, object]:
    """The record for an event: ``message_update`` reduced to ``usage`` + the delta event, every
    other event unchanged.
    """
    if event["type"] != "message_update":
        return event
    delta: Mapping[str, object] = event["assistantMessageEvent"]
    if "partial" in delta:
        delta = {key: value for key, value in delta.items() if key != "partial"}
    return {
        "type": "message_update",
        "usage": event["message"].get("usage"),
        "assistantMessageEvent": delta,
    }


def encode_record(record: Mapping[str, object]) -> bytes:
    r"""One LF-terminated JSON record: compact, raw UTF-8 (U+2028/U+2029 included), numbers as
    JavaScript writes them; a lone surrogate, which UTF-8 cannot carry, is escaped as
    ``\udXXX`` like JavaScript does.
    """
    return jsonl.encode_line(record)


def _grow_pipe(fd: int) -> None:
    # A chunk fits in a 1 MB pipe buffer, so os.write returns at once and the next chunk is
    # encoded while the reader reads this one; with the default 64 KB, encoding and reading take
    # turns. Linux only; a file, a tty or a refused size keep what they have.
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if set_size is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, set_size, _PIPE_BYTES)


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
        self.error: str | None = None
        """Why the stream could not be written (a full disk, say), once that happened: the
        records after it are dropped, and the run's exit status says so."""

    def write(self, record: Mapping[str, object]) -> None:
        kind = record.get("type")
        if kind not in STREAMING_EVENTS and jsonl.holds_large_list(record):
            # A get_messages response can be 100 MB: written as it is encoded, a chunk at a
            # time, never held whole.
            self.flush()
            self._write_large(record)
            return
        self._pending.append(jsonl.encode_line(record))
        if kind in STREAMING_EVENTS:
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
        self.write(to_wire(event))

    def flush(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        self._write_chunks((data,))

    def _write_large(self, record: Mapping[str, object]) -> None:
        if self._fd is not None:
            _grow_pipe(self._fd)
        written = False

        def chunks() -> Iterator[bytes]:
            nonlocal written
            for chunk in jsonl.iter_line(record):
                yield chunk
                written = True

        try:
            self._write_chunks(chunks())
        except BaseException:
            # A value that cannot be encoded (a plugin's object in a message) is found only once
            # part of the record is out: end that line, so the next record starts on its own.
            if written:
                self._write_chunks((b"\n",))
            raise

    def _write_chunks(self, chunks: Iterable[bytes]) -> None:
        try:
            for data in chunks:
                self._write(data)
        except BrokenPipeError:
            # The reader went away (e.g. `| head`); nobody is left to tell, and the rest of a
            # large record is not encoded for nobody.
            self._drop_the_rest()
        except OSError as error:
            # Told once, on stderr (still there when stdout is a full disk), not as a traceback.
            self.error = f"cannot write to stdout: {error.strerror or error}"
            print(f"knightcode: error: {self.error}", file=sys.stderr)
            self._drop_the_rest()

    def _drop_the_rest(self) -> None:
        self._fd = None
        self._stream = open(os.devnull, "wb")  # noqa: SIM115 - lives as long as the writer

    def _write(self, data: bytes) -> None:
        if self._fd is not None:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        else:
            self._stream.write(data)
            self._stream.flush()
