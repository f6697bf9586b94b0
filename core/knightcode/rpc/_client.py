"""``Client``: drive a ``knightcode --mode rpc`` subprocess from asyncio code.

::

    async with Client(["--model", "anthropic/claude-sonnet-4-5"], cwd=project) as client:
        mark = client.mark()
        await client.prompt("List the Python files")
        settled = await client.wait_for(lambda e: e["type"] == "agent_settled", since=mark)
        print(await client.get_last_assistant_text())

Every record the process writes that is not the response to one of our commands (session
events, ``extension_ui_request``, ``extension_error``, responses to raw lines) is kept in
:attr:`Client.history` in arrival order. :meth:`mark` returns the current position, so a caller
can wait for something that happens *after* a command without missing an event that arrives
before ``wait_for`` is called.

The client owns every task it starts (the stdout and stderr readers, the automatic dialog
answers): :meth:`close` ends them all, so nothing of the client is left pending on the loop.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from types import TracebackType
from typing import Self

from knightcode._modes.rpc.framing import LineSplitter
from knightcode._modes.wire import encode_record
from knightcode.rpc._commands import CommandMixin

__all__ = ["Client", "RpcClosedError", "RpcError"]

Record = dict[str, object]
"""One record knightcode wrote: a response, a session event, a UI request …"""
# After the process exited, how long its output pipes may stay open (a grandchild that
# inherited them) before the readers are stopped.
_READER_GRACE = 2.0
# One decoder, fed str: json.loads(bytes) sniffs the encoding first and costs twice as much,
# which shows when thousands of stream records arrive between two responses.
_decode = json.JSONDecoder().decode
UiAnswer = Mapping[str, object] | None
UiHandler = Callable[[Record], UiAnswer | Awaitable[UiAnswer]]


class RpcError(Exception):
    """A command was answered with ``success: false``.

    :ivar command: the command type
    :ivar error: the error message from knightcode
    :ivar response: the whole response record
    """

    def __init__(self, response: Record) -> None:
        self.command = str(response.get("command"))
        self.error = str(response.get("error"))
        self.response = response
        super().__init__(f"{self.command}: {self.error}")


class RpcClosedError(Exception):
    """The knightcode process exited (or was closed) before answering."""


class Client(CommandMixin):
    """A running ``knightcode --mode rpc`` process.

    :param args: extra command-line arguments (``--model``, ``--no-session``, ``-e PATH`` …)
    :param env: the child's environment (default: this process's)
    :param cwd: the child's working directory, i.e. the project
    :param command: how to start knightcode (default: this interpreter's ``-m knightcode``)
    :param ui_handler: answers ``extension_ui_request`` dialogs automatically: called with the
        request, it returns the answer's fields (``{"value": ...}``, ``{"confirmed": True}``,
        ``{"cancelled": True}``) or None to leave the dialog to the caller
    :param timeout: default seconds to wait for a response or an event
    """

    def __init__(
        self,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        command: Sequence[str] | None = None,
        ui_handler: UiHandler | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.args = list(args)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.command = (
            list(command) if command is not None else [sys.executable, "-m", "knightcode"]
        )
        self.ui_handler = ui_handler
        self.timeout = timeout
        self.history: list[Record] = []
        """Every record that is not a response to one of this client's commands."""
        self.stderr = bytearray()
        """What the process wrote to stderr so far."""
        self.stray_lines: list[bytes] = []
        """stdout lines that were not JSON (there should be none)."""
        self.process: asyncio.subprocess.Process | None = None
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Record]] = {}
        self._arrived = asyncio.Condition()
        self._readers: list[asyncio.Task[None]] = []
        self._tasks: set[asyncio.Task[None]] = set()  # every task of this client, readers too
        self._closed = False
        self._listeners: list[Callable[[Record], None]] = []
        self._stdout_closed = False

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> Self:
        """Start the process (``<command> --mode rpc <args>``)."""
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            "--mode",
            "rpc",
            *self.args,
            cwd=self.cwd,
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        self._readers = [self._spawn(self._read_stdout()), self._spawn(self._read_stderr())]
        return self

    def _spawn(self, work: Coroutine[object, object, None]) -> asyncio.Task[None]:
        """Run ``work`` as a task of this client (:meth:`close` ends it)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self, timeout: float = 15.0) -> int:
        """Close stdin (knightcode aborts running work and exits) and return the exit status;
        the process is killed if it does not exit within ``timeout`` seconds. Every task of the
        client has ended when this returns.
        """
        process = self._require()
        self._closed = True
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            status = await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            process.kill()
            status = await process.wait()
        try:
            # The readers end at end of file, which comes with the exit unless a grandchild
            # holds the pipes open.
            if self._readers:
                await asyncio.wait(self._readers, timeout=_READER_GRACE)
        finally:
            await self._end_tasks()
        return status

    async def _end_tasks(self) -> None:
        """Cancel the client's remaining tasks (dialog answers, stuck readers) and wait for them."""
        current = asyncio.current_task()
        while pending := [task for task in self._tasks if not task.done() and task is not current]:
            for task in pending:
                task.cancel()
            await asyncio.wait(pending)

    def _require(self) -> asyncio.subprocess.Process:
        if self.process is None:
            raise RuntimeError(
                "the client is not started; use 'async with Client(...)' or await start()"
            )
        return self.process

    # --- sending -----------------------------------------------------------------------------

    async def send(self, command: Mapping[str, object], *, timeout: float | None = None) -> Record:
        """Send a command and return its response (``success`` true or false). An ``id`` is
        added when the command has none.
        """
        record = dict(command)
        request_id = str(record.get("id") or f"req-{next(self._ids)}")
        record["id"] = request_id
        if self._stdout_closed:
            raise RpcClosedError(self._describe_exit())
        future: asyncio.Future[Record] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self.send_raw(encode_record(record))
            return await asyncio.wait_for(future, timeout or self.timeout)
        finally:
            self._pending.pop(request_id, None)

    async def call(self, command: Mapping[str, object], *, timeout: float | None = None) -> object:
        """Send a command and return the response's ``data`` (None when it has none); raises
        :class:`RpcError` when it failed. The typed command methods check the data's shape.
        """
        response = await self.send(command, timeout=timeout)
        if not response.get("success"):
            raise RpcError(response)
        return response.get("data")

    async def send_raw(self, data: bytes) -> None:
        """Write bytes to knightcode's stdin as they are (for framing tests and hostile input)."""
        stdin = self._require().stdin
        if stdin is None or stdin.is_closing():
            raise RpcClosedError(self._describe_exit())
        stdin.write(data)
        try:
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as error:
            raise RpcClosedError(self._describe_exit()) from error

    async def respond_ui(self, request_id: str, **answer: object) -> None:
        """Answer an ``extension_ui_request``: ``value=``, ``confirmed=`` or ``cancelled=True``."""
        await self.send_raw(
            encode_record({"type": "extension_ui_response", "id": request_id, **answer})
        )

    # --- receiving ---------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[Record], None]) -> Callable[[], None]:
        """Call ``listener`` with every event as it arrives; returns a function that
        unsubscribes.
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def mark(self) -> int:
        """The current position in :attr:`history`, for :meth:`wait_for`'s ``since``."""
        return len(self.history)

    async def wait_for(
        self, predicate: Callable[[Record], bool], *, since: int = 0, timeout: float | None = None
    ) -> Record:
        """The first event at or after position ``since`` matching ``predicate``, waiting for
        it to arrive; :class:`TimeoutError` after ``timeout`` seconds.
        """

        async def find() -> Record:
            start = since
            async with self._arrived:
                while True:
                    for event in self.history[start:]:
                        if predicate(event):
                            return event
                    start = len(self.history)
                    if self._reader_done():
                        raise RpcClosedError(self._describe_exit())
                    await self._arrived.wait()

        return await asyncio.wait_for(find(), timeout or self.timeout)

    async def events(self, *, since: int | None = None) -> AsyncIterator[Record]:
        """Events from position ``since`` (default: from now) as they arrive, until the
        process closes its stdout.
        """
        index = self.mark() if since is None else since
        while True:
            async with self._arrived:
                while index >= len(self.history) and not self._reader_done():
                    await self._arrived.wait()
                batch = self.history[index:]
            index += len(batch)
            for event in batch:
                yield event
            if not batch and self._reader_done():
                return

    def _reader_done(self) -> bool:
        return self._stdout_closed

    async def _read_stdout(self) -> None:
        stream = self._require().stdout
        assert stream is not None
        splitter = LineSplitter()
        try:
            while chunk := await stream.read(256 * 1024):
                await self._receive(splitter.feed(chunk))
            await self._receive(splitter.finish())
        finally:
            self._stdout_closed = True
            # Usually stdout closes because the process exits: wait a moment for its status and
            # last stderr lines, so the error says why.
            process = self._require()
            exited = asyncio.ensure_future(process.wait())
            try:
                await asyncio.wait([exited, *self._readers[1:]], timeout=2.0)
            finally:
                exited.cancel()
                await asyncio.wait([exited])
            error = RpcClosedError(self._describe_exit())
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)
            async with self._arrived:
                self._arrived.notify_all()

    async def _receive(self, lines: list[bytes]) -> None:
        batch: list[Record] = []
        for line in lines:
            if not line:
                continue
            try:
                record = _decode(line.decode("utf-8"))
            except ValueError:  # not knightcode's (it writes only records); keep, do not die
                record = None
            if not isinstance(record, dict):
                self.stray_lines.append(line)
                continue
            if record.get("type") == "response":
                future = self._pending.get(str(record.get("id")))
                if future is not None and not future.done():
                    future.set_result(record)
                    await self._publish(batch)
                    batch = []
                    # Let the caller waiting for this response go on now, not after the rest of
                    # a large read (thousands of stream records) has been parsed too.
                    await asyncio.sleep(0)
                    continue
            batch.append(record)
        await self._publish(batch)

    async def _publish(self, records: list[Record]) -> None:
        if not records:
            return
        async with self._arrived:
            for record in records:
                self.history.append(record)
                if self._listeners:
                    for listener in list(self._listeners):
                        listener(record)
                if record.get("type") == "extension_ui_request" and self.ui_handler is not None:
                    self._spawn(self._auto_answer(record))
            self._arrived.notify_all()

    async def _auto_answer(self, request: Record) -> None:
        assert self.ui_handler is not None
        answer = self.ui_handler(request)
        if isinstance(answer, Awaitable):
            answer = await answer
        if answer is not None and not self._closed:
            await self.respond_ui(str(request["id"]), **answer)

    async def _read_stderr(self) -> None:
        stream = self._require().stderr
        assert stream is not None
        while chunk := await stream.read(64 * 1024):
            self.stderr += chunk

    def _describe_exit(self) -> str:
        process = self.process
        code = process.returncode if process is not None else None
        tail = self.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        detail = f": {' / '.join(tail)}" if tail else ""
        return f"knightcode is not running (exit status {code}){detail}"
