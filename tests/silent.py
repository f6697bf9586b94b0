"""A loopback HTTP server that takes requests and never answers them, and a stopwatch for
"aborting ends the work within 100 ms" measurements.

:class:`SilentServer` is the worst case for cancellation: the client has connected and sent its
request, and nothing will ever come back (no status line, no byte), so only an abort that reaches
the pending read ends the wait. Each request it has fully received is counted, so a test can
abort at a known moment: *after* the work is really waiting on the network.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self, TypeVar

__all__ = ["ABORT_BOUND", "REPEATS", "SilentServer", "abort_and_time"]

ABORT_BOUND = 0.1
"""Seconds from the abort to the end of the work, at worst."""

REPEATS = 4
"""How many times each measurement is taken (the worst one is asserted)."""

_T = TypeVar("_T")


class SilentServer:
    """Listens on 127.0.0.1, reads each request's head, and then holds the connection open."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._lock = threading.Condition()
        self._received = 0
        self._open: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, name="silent-server", daemon=True).start()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def received(self) -> int:
        """Requests whose head arrived so far."""
        with self._lock:
            return self._received

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> None:
        """Block until ``count`` request heads arrived (:class:`TimeoutError` otherwise)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._received < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self._received} of {count} requests arrived")
                self._lock.wait(left)

    async def requests_arrived(self, count: int, timeout: float = 10.0) -> None:
        """:meth:`wait_for_requests` without blocking the event loop."""
        await asyncio.to_thread(self.wait_for_requests, count, timeout)

    def close(self) -> None:
        """Stop listening and drop every held connection."""
        with self._lock:
            self._closed = True
            held, self._open = self._open, []
        self._listener.close()
        for connection in held:
            connection.close()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    connection.close()
                    return
                self._open.append(connection)
            threading.Thread(target=self._read, args=(connection,), daemon=True).start()

    def _read(self, connection: socket.socket) -> None:
        data = b""
        try:
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                data += chunk
                while b"\r\n\r\n" in data:  # one more request head (a body is not waited for)
                    _, data = data.split(b"\r\n\r\n", 1)
                    with self._lock:
                        self._received += 1
                        self._lock.notify_all()
        except OSError:
            return


async def abort_and_time(abort: Callable[[], object], work: asyncio.Future[_T]) -> float:
    """Call ``abort`` and wait for ``work`` (a task) to end: the seconds in between.

    The caller looks at the outcome (``work.result()``, ``work.exception()``). A cancellation
    that never arrives fails after 10 s instead of hanging the test.
    """
    started = time.monotonic()
    abort()
    done, _ = await asyncio.wait({work}, timeout=10)
    elapsed = time.monotonic() - started
    assert done, "the work did not end within 10 s of the abort"
    return elapsed
