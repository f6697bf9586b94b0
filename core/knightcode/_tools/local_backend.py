"""``LocalBackend``: the tools' files and processes on this machine (POSIX).

Processes run in their own session (``start_new_session=True``), so one ``killpg`` reaches the
command and everything it started; output is read from raw pipes on the event loop, which keeps
per-chunk overhead low enough for ``rg`` output on large trees (see ``bench/tools_search.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import signal as signals
import stat as stat_module
import subprocess
import sys
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from knightcode._abort import AbortSignal
from knightcode._tools.backend import DirEntry, ExecResult, FileInfo, OutputCallback

__all__ = ["LocalBackend"]

_T = TypeVar("_T")

_READ_SIZE = 256 * 1024
# O_NONBLOCK: opening a FIFO never waits for a writer, and a regular file that reads like a stream
# (/proc/kmsg) fails with EAGAIN instead of blocking a worker thread forever.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
# After an abort, output still in flight is read, but a process that left the group (setsid)
# and holds the pipe open is not waited for: the person who aborted is waiting.
_ABORTED_DRAIN_IDLE = 0.02


class _PipeReader:
    """Reads one pipe without blocking the loop, handing chunks to ``sink``."""

    def __init__(self, fd: int, sink: OutputCallback) -> None:
        self._fd = fd
        self._sink = sink
        self._loop = asyncio.get_running_loop()
        self._eof = self._loop.create_future()
        self._watching = True
        self.received = 0
        os.set_blocking(fd, False)
        self._loop.add_reader(fd, self._on_readable)

    def _on_readable(self) -> None:
        # Read until the pipe is empty (capped) so a chatty process costs few loop iterations.
        for _ in range(8):
            try:
                chunk = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._stop_watching()
                if not self._eof.done():
                    self._eof.set_result(None)
                return
            self.received += len(chunk)
            self._sink(chunk)

    def _stop_watching(self) -> None:
        if self._watching:
            self._watching = False
            self._loop.remove_reader(self._fd)

    async def drain(self, idle: float) -> None:
        """Wait for end of file, giving up once no data arrived for ``idle`` seconds.

        A background job the command left running (``sleep 60 &``) holds the pipe open; like the
        reference we stop reading shortly after the command itself is gone.
        """
        while not self._eof.done():
            before = self.received
            try:
                await asyncio.wait_for(asyncio.shield(self._eof), idle)
            except TimeoutError:
                if self.received == before:
                    return

    def close(self) -> None:
        self._stop_watching()
        os.close(self._fd)


def _signal_group(pid: int, sig: int) -> None:
    # The group may be gone (or its id may now belong to someone we may not signal).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _require_regular(mode: int, path: str) -> None:
    """Refuse what a file read could block on or never finish: FIFOs, devices, sockets."""
    if stat_module.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat_module.S_ISREG(mode):
        raise OSError(errno.EINVAL, "not a regular file", path)


class _OpenFile:
    """A file descriptor read in worker threads, one read at a time.

    A read abandoned by cancellation (a tool timeout) keeps running in its thread; the descriptor
    is closed when that read returns, never under it — a closed number can be handed to another
    ``open`` at once, and the thread would then read someone else's file.
    """

    __slots__ = ("_busy", "_released", "fd")

    def __init__(self) -> None:
        self.fd = -1
        self._busy = False
        self._released = False

    async def run(self, work: Callable[[], _T]) -> _T:
        """``work()`` in a worker thread; cancelling the caller does not wait for it."""
        self._busy = True
        future = asyncio.get_running_loop().run_in_executor(None, work)
        # Registered before shield's own callback, so it runs before the caller resumes.
        future.add_done_callback(self._returned)
        return await asyncio.shield(future)

    def _returned(self, future: asyncio.Future[_T]) -> None:
        self._busy = False
        if not future.cancelled():
            future.exception()  # retrieved here too: an abandoned read's error is nobody's
        if self._released:
            self._close()

    def release(self) -> None:
        """Close now, or once the read in flight returns."""
        self._released = True
        if not self._busy:
            self._close()

    def _close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _read_some(fd: int, size: int) -> tuple[bytes, bool]:
    """Up to ``size`` bytes, and whether the end of the file was reached."""
    parts: list[bytes] = []
    wanted = size
    while wanted > 0:
        part = os.read(fd, wanted)
        if not part:
            return b"".join(parts), True
        parts.append(part)
        wanted -= len(part)
    return b"".join(parts), False


def _open_regular(path: str) -> tuple[int, int]:
    """An open descriptor of the regular file ``path``, and its size.

    The path is checked before the open, so a FIFO or a device is never opened, and the open
    descriptor again, in case the path was swapped in between.
    """
    _require_regular(os.stat(path).st_mode, path)
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        _require_regular(info.st_mode, path)
    except BaseException:
        os.close(fd)
        raise
    return fd, info.st_size


def _open_and_read(handle: _OpenFile, path: str, size: int) -> tuple[bytes, bool]:
    handle.fd, known_size = _open_regular(path)
    # A small file comes back in one read of its size (plus one byte to see the end), without a
    # chunk-sized buffer; files whose size says nothing (/proc) get whole chunks.
    first = min(size, known_size + 1) if known_size > 0 else size
    data, eof = _read_some(handle.fd, first)
    if eof or first == size:
        return data, eof
    more, eof = _read_some(handle.fd, size - len(data))
    return data + more, eof


def _read_bytes(path: str) -> bytes:
    fd, _ = _open_regular(path)
    with open(fd, "rb") as handle:
        return handle.read()


def _write_bytes(path: str, data: bytes) -> None:
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def _stat(path: str) -> FileInfo | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return FileInfo(
        stat_module.S_ISREG(info.st_mode),
        stat_module.S_ISDIR(info.st_mode),
        info.st_size,
        info.st_mtime,
    )


def _list_dir(path: str) -> list[DirEntry]:
    entries: list[DirEntry] = []
    with os.scandir(path) as scan:
        for entry in scan:
            try:
                if entry.is_symlink():
                    # stat through the link: a dangling link raises and is skipped, as in the
                    # reference's ls, and a link to a directory gets its "/".
                    is_dir = stat_module.S_ISDIR(os.stat(entry.path).st_mode)
                else:
                    is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            entries.append(DirEntry(entry.name, is_dir))
    return entries


def _feed(process: asyncio.subprocess.Process, data: bytes) -> asyncio.Task[None]:
    """Write ``data`` to the process's stdin and close it, in the background (a process that
    exits without reading must not make us wait or fail).
    """

    async def feed() -> None:
        pipe = process.stdin
        assert pipe is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            pipe.write(data)
            await pipe.drain()
        pipe.close()

    return asyncio.ensure_future(feed())


class LocalBackend:
    """The default :class:`~knightcode._tools.backend.ExecutionBackend`: this machine.

    :param cwd: the working directory for processes started without one (default: the current)
    :param kill_grace: seconds between SIGTERM and SIGKILL when a timeout kills a process group
    :param abort_grace: the same when an abort kills it: short, because an abort must take
        effect within 100 ms, SIGKILL included
    :param drain_idle: after a process ends, stop reading its output once the pipe stayed quiet
        this long (background jobs may keep it open forever)
    """

    def __init__(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        kill_grace: float = 0.2,
        abort_grace: float = 0.05,
        drain_idle: float = 0.1,
    ) -> None:
        self.cwd = os.fspath(cwd) if cwd is not None else os.getcwd()
        self.kill_grace = kill_grace
        self.abort_grace = abort_grace
        self.drain_idle = drain_idle
        self._executables: dict[str, str | None] = {}

    def __repr__(self) -> str:
        return f"LocalBackend(cwd={self.cwd!r})"

    # --- files ---

    async def read_file(self, path: str) -> bytes:
        return await asyncio.to_thread(_read_bytes, path)

    async def read_chunks(
        self, path: str, chunk_size: int = _READ_SIZE
    ) -> AsyncGenerator[bytes, None]:
        """The regular file ``path`` chunk by chunk (see
        :class:`~knightcode._tools.backend.ChunkedReads`); each chunk is read in a worker thread,
        so stopping between chunks is always possible.
        """
        handle = _OpenFile()
        try:
            chunk, eof = await handle.run(lambda: _open_and_read(handle, path, chunk_size))
            while True:
                if chunk:
                    yield chunk
                if eof:
                    return
                chunk, eof = await handle.run(lambda: _read_some(handle.fd, chunk_size))
        finally:
            handle.release()

    async def write_file(self, path: str, data: bytes) -> None:
        await asyncio.to_thread(_write_bytes, path, data)

    async def stat(self, path: str) -> FileInfo | None:
        return await asyncio.to_thread(_stat, path)

    async def exists(self, path: str) -> bool:
        return await self.stat(path) is not None

    async def list_dir(self, path: str) -> list[DirEntry]:
        return await asyncio.to_thread(_list_dir, path)

    # --- environment ---

    def environment(self) -> Mapping[str, str]:
        return os.environ

    def home(self) -> str:
        return os.path.expanduser("~")

    async def find_executable(self, name: str) -> str | None:
        if name not in self._executables:
            self._executables[name] = self._lookup(name)
        return self._executables[name]

    def _lookup(self, name: str) -> str | None:
        if os.sep in name:
            return name if os.access(name, os.X_OK) else None
        # Programs installed as wheels beside our interpreter (the ripgrep wheel's rg) come
        # first: the venv's bin/ is often not on PATH when knightcode is run by absolute path.
        beside = Path(sys.executable).parent / name
        if beside.is_file() and os.access(beside, os.X_OK):
            return str(beside)
        return shutil.which(name, path=self.environment().get("PATH"))

    def default_shell(self) -> str:
        """``/bin/bash``, else ``bash`` on PATH, else ``sh`` (the reference's order)."""
        if os.path.exists("/bin/bash"):
            return "/bin/bash"
        return shutil.which("bash") or "sh"

    # --- processes ---

    async def exec(
        self,
        argv: Sequence[str] | None = None,
        *,
        shell_command: str | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_output: OutputCallback | None = None,
        merge_stderr: bool = True,
        stdin: bytes | None = None,
    ) -> ExecResult:
        """See :meth:`~knightcode._tools.backend.ExecutionBackend.exec`; ``stdin`` (not part
        of the protocol) is fed to the process, then closed — sandbox runners write files
        through it.
        """
        if (argv is None) == (shell_command is None):
            raise ValueError("exec() needs exactly one of argv and shell_command")
        command = (
            list(argv) if argv is not None else [self.default_shell(), "-c", str(shell_command)]
        )
        if signal is not None and signal.aborted:
            return ExecResult(None, aborted=True)
        collected: list[bytes] = []
        errors: list[bytes] = []
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe() if not merge_stderr else (-1, -1)
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=out_w,
                stderr=out_w if merge_stderr else err_w,
                cwd=cwd or self.cwd,
                env=dict(env) if env is not None else None,
                start_new_session=True,
            )
        except BaseException:
            for fd in (out_r, err_r):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (out_w, err_w):
                if fd >= 0:
                    os.close(fd)
        readers = [_PipeReader(out_r, on_output or collected.append)]
        if err_r >= 0:
            readers.append(_PipeReader(err_r, errors.append))
        feeding = _feed(process, stdin) if stdin is not None else None
        exited = asyncio.ensure_future(process.wait())
        timed_out = aborted = False
        try:
            outcome = await (signal or AbortSignal()).outlast(exited, timeout)
            timed_out, aborted = outcome == "timed_out", outcome == "aborted"
            if aborted or timed_out:
                grace = self.abort_grace if aborted else self.kill_grace
                await self._kill_group(process.pid, exited, grace)
            idle = min(self.drain_idle, _ABORTED_DRAIN_IDLE) if aborted else self.drain_idle
            for reader in readers:
                await reader.drain(idle)
        finally:
            if not exited.done():
                # We are being cancelled (a tool timeout, shutdown): no time for a grace period.
                # The child watcher still reaps the process; the waiting task must not outlive us.
                _signal_group(process.pid, signals.SIGKILL)
                exited.cancel()
            for reader in readers:
                reader.close()
            if feeding is not None and not feeding.done():
                feeding.cancel()
        code = process.returncode
        return ExecResult(
            code if code is not None and code >= 0 else None,
            b"".join(collected),
            timed_out,
            aborted,
            b"".join(errors),
        )

    async def _kill_group(self, pid: int, exited: asyncio.Future[int], grace: float) -> None:
        """SIGTERM the group, give it ``grace`` seconds to go, then SIGKILL whatever is left."""
        _signal_group(pid, signals.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(exited), grace)
        # Grandchildren may survive the leader (or ignore SIGTERM): the group kill reaches them.
        _signal_group(pid, signals.SIGKILL)
        await exited
