r"""Strict JSONL framing for RPC input: split bytes on LF only, strip one trailing CR.

``str.splitlines()`` and line-oriented text readers also break on U+2028, U+2029, U+0085 and
the 0x1C-0x1E separators, which are ordinary data inside JSON strings (``spec/json.md``), so
input is read as bytes and split on ``b"\n"`` here. The same splitter serves the server (stdin)
and the client library (the child's stdout).

:class:`StdinReader` reads in a thread rather than through ``loop.connect_read_pipe``: the
latter refuses regular files, and ``knightcode --mode rpc < commands.jsonl`` must work too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable

__all__ = ["MAX_LINE_BYTES", "LineSplitter", "OversizedLine", "StdinReader"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""A line longer than this is dropped (and answered with an error) instead of held in memory."""

READ_SIZE = 256 * 1024

SWITCH_INTERVAL = 0.001
"""Seconds a busy thread holds the GIL while the stdin reader waits for it (see ``start``)."""


class OversizedLine(bytes):
    """Stands in for a line that exceeded the size limit; its value is the line's first bytes."""

    size: int = 0


class LineSplitter:
    """Feed byte chunks, get complete lines (without LF and one trailing CR).

    Buffering is linear in the input: the buffer is only searched from where the previous
    search stopped, so a multi-megabyte line arriving in small chunks is not rescanned.

    :param max_line: longer lines are reported as :class:`OversizedLine` and not kept
    """

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._buffer = bytearray()
        self._scanned = 0
        self._max_line = max_line
        self._skipping = 0  # >0: inside an oversized line, counting its bytes
        self._head = b""  # the first bytes of the oversized line, for the error message

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines completed by ``chunk``."""
        lines: list[bytes] = []
        start = 0
        if self._skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                self._skipping += len(chunk)
                return lines
            lines.append(self._oversized(self._skipping + newline))
            self._skipping = 0
            start = newline + 1
        buffer = self._buffer
        buffer += memoryview(chunk)[start:]
        begin = 0
        while True:
            newline = buffer.find(b"\n", max(self._scanned, begin))
            if newline < 0:
                break
            lines.append(_strip_cr(bytes(buffer[begin:newline])))
            begin = newline + 1
            self._scanned = begin
        if begin:
            del buffer[:begin]
        self._scanned = len(buffer)
        if len(buffer) > self._max_line:
            # Keep counting but stop storing: a hostile client cannot make us buffer gigabytes.
            self._skipping = len(buffer)
            self._head = bytes(buffer[:64])
            buffer.clear()
            self._scanned = 0
        return lines

    def finish(self) -> list[bytes]:
        """End of input: a final line without LF is still a line (an empty rest is not)."""
        if self._skipping:
            size, self._skipping = self._skipping, 0
            return [self._oversized(size)]
        rest = bytes(self._buffer)
        self._buffer.clear()
        self._scanned = 0
        return [_strip_cr(rest)] if rest else []

    def _oversized(self, size: int) -> OversizedLine:
        line = OversizedLine(self._head)
        line.size = size
        return line


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line


def _is_abort(line: bytes) -> bool:
    """Whether ``line`` is an ``abort`` command (a cheap test first: most lines are not)."""
    if b"abort" not in line:
        return False
    try:
        command = json.loads(line)
    except ValueError:
        return False
    return isinstance(command, dict) and command.get("type") == "abort"


class StdinReader:
    """Reads a file descriptor in a daemon thread and hands lines to the event loop.

    ``on_lines`` receives each batch of complete lines (one batch per read, so a burst of small
    commands costs one loop wake-up); ``on_eof`` is called once at end of input or on a read
    error. Both run on the loop's thread.
    """

    def __init__(
        self,
        fd: int,
        loop: asyncio.AbstractEventLoop,
        on_lines: Callable[[list[bytes]], None],
        on_eof: Callable[[], None],
    ) -> None:
        self._fd = fd
        self._loop = loop
        self._on_lines = on_lines
        self._on_eof = on_eof
        self._thread = threading.Thread(target=self._run, name="knightcode-rpc-stdin", daemon=True)
        self.on_abort: Callable[[], object] | None = None
        """Called on this thread when an ``abort`` command arrives: the loop may be blocked by
        a plugin's handler, and only this thread can stop it (``Watchdog.interrupt``)."""

    def start(self) -> None:
        # A command line read while a reply streams needs the GIL to reach the loop. The loop's
        # thread, busy encoding deltas, gives it up only at the interpreter's switch interval
        # (5 ms by default), which doubled ``get_state`` round trips during a stream. Idle
        # threads never ask for the GIL, so a shorter interval costs nothing when nothing reads.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        self._thread.start()

    def _run(self) -> None:
        splitter = LineSplitter()
        try:
            while True:
                try:
                    chunk = os.read(self._fd, READ_SIZE)
                except InterruptedError:  # pragma: no cover - PEP 475 retries for us
                    continue
                if not chunk:
                    break
                lines = splitter.feed(chunk)
                if lines:
                    self._post(self._on_lines, lines)
                    if self.on_abort is not None and any(map(_is_abort, lines)):
                        self.on_abort()
            lines = splitter.finish()
            if lines:
                self._post(self._on_lines, lines)
        except OSError:
            pass  # a closed or broken stdin is the same as end of input
        finally:
            self._post(self._on_eof)

    def _post(self, callback: Callable[..., None], *args: object) -> None:
        # RuntimeError: the loop is already closed, knightcode is exiting anyway.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(callback, *args)
