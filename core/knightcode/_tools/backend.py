"""The ``ExecutionBackend`` protocol: every file and process access of every tool goes here.

knightcode's tools never touch ``os`` or ``subprocess`` directly; they call the backend in the
tool context. The local backend (:class:`~knightcode._tools.local_backend.LocalBackend`) works on
this machine. A sandbox plugin returns another implementation from the ``execution_backend`` hook
and every tool, built-in and plugin tools alike, then works inside the sandbox.

Paths are absolute POSIX path strings in the backend's own filesystem; the tools resolve relative
paths against the context's ``cwd`` before calling. See ``docs/tools.md`` for the contract.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal

__all__ = [
    "ChunkedReads",
    "DirEntry",
    "ExecResult",
    "ExecutionBackend",
    "FileInfo",
    "HostCommand",
    "HostCommands",
    "MappedBackend",
    "OutputCallback",
    "PreparedBackend",
    "agent_cwd",
]

OutputCallback = Callable[[bytes], None]
"""Receives each chunk of process output as it arrives (called on the event loop thread)."""


@dataclass(frozen=True)
class FileInfo:
    """What :meth:`ExecutionBackend.stat` reports (symbolic links followed)."""

    is_file: bool
    is_dir: bool
    size: int
    mtime: float  # seconds since the epoch


@dataclass(frozen=True)
class DirEntry:
    """One entry of :meth:`ExecutionBackend.list_dir`; ``is_dir`` follows symbolic links."""

    name: str
    is_dir: bool


@dataclass(frozen=True)
class ExecResult:
    """How a process ended.

    :param exit_code: the exit status, or None when the process died from a signal
    :param output: everything the process wrote (stdout and stderr merged, unless
        ``merge_stderr=False``), or ``b""`` when it was streamed to ``on_output`` instead
    :param timed_out: the timeout expired and the process group was killed
    :param aborted: ``signal`` was set and the process group was killed
    :param stderr: stderr alone when ``merge_stderr=False``, else ``b""``
    """

    exit_code: int | None
    output: bytes = b""
    timed_out: bool = False
    aborted: bool = False
    stderr: bytes = b""


@runtime_checkable
class ExecutionBackend(Protocol):
    """File operations and process execution, as the tools need them.

    File methods raise ``OSError`` (with ``errno`` set, e.g. ``ENOENT``, ``EACCES``, ``EISDIR``)
    for failures other than those whose result says "missing" (``stat``, ``exists``).
    """

    async def read_file(self, path: str) -> bytes:
        """The whole content of the file at ``path``."""
        ...

    async def write_file(self, path: str, data: bytes) -> None:
        """Create or replace the file at ``path``, creating missing parent directories."""
        ...

    async def stat(self, path: str) -> FileInfo | None:
        """Facts about ``path`` (following links), or None when it does not exist or cannot be
        reached.
        """
        ...

    async def exists(self, path: str) -> bool:
        """Whether ``path`` exists (following links)."""
        ...

    async def list_dir(self, path: str) -> list[DirEntry]:
        """The entries of the directory ``path`` in no particular order, without ``.``/``..``;
        entries that cannot be stat-ed (dangling links, races) are left out.
        """
        ...

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
    ) -> ExecResult:
        """Run a process in its own process group and wait for it.

        Give either ``argv`` (run directly) or ``shell_command`` (run by the backend's default
        shell as ``[shell, "-c", shell_command]``).

        :param cwd: working directory (default: the backend's own)
        :param env: the complete environment (default: :meth:`environment`)
        :param timeout: seconds; when it expires the whole process group is killed and the result
            has ``timed_out``. None or <= 0: no timeout
        :param signal: when set, the whole process group is killed and the result has ``aborted``
        :param on_output: receives output chunks as they arrive; ``ExecResult.output`` is then
            empty
        :param merge_stderr: False keeps stderr apart, returned whole in ``ExecResult.stderr``
        :raises OSError: the program could not be started (missing, not executable, bad cwd)
        """
        ...

    async def find_executable(self, name: str) -> str | None:
        """The path of the program ``name`` as :meth:`exec` would find it, or None."""
        ...

    def environment(self) -> Mapping[str, str]:
        """The environment processes get by default (the basis the bash tool extends)."""
        ...

    def home(self) -> str:
        """The user's home directory, for ``~`` in paths."""
        ...


@runtime_checkable
class ChunkedReads(Protocol):
    """An optional backend method: a regular file read piece by piece.

    ``read`` uses it when the backend has it, so a huge file costs one chunk of memory at a time
    and the read stops (timeout, abort) between chunks; otherwise it falls back to
    :meth:`ExecutionBackend.read_file`. It is a protocol of its own so that backends written
    before it existed still satisfy :class:`ExecutionBackend`.
    """

    def read_chunks(self, path: str, chunk_size: int) -> AsyncGenerator[bytes, None]:
        """The content of the regular file at ``path``, at most ``chunk_size`` bytes per chunk.

        Must not open, and so never block on, anything but a regular file: a directory raises
        ``IsADirectoryError`` (``EISDIR``), a FIFO, device or socket ``OSError`` (``EINVAL``)
        before any open. Typically an ``async def`` generator: the reader calls its ``aclose()`` to
        stop early.
        """
        ...


@runtime_checkable
class PreparedBackend(Protocol):
    """Optional backend methods: start before the session, stop after it.

    The kernel awaits ``prepare`` once, before the session starts; an exception refuses the
    session (a sandbox that cannot start, or whose boundary leaks, must never fall back to
    running on the host). ``aclose`` is awaited when knightcode exits.
    """

    async def prepare(self) -> None:
        """Get ready (start a container or VM, check the boundary); raise to refuse."""
        ...

    async def aclose(self) -> None:
        """Stop everything the backend started; idempotent."""
        ...


@runtime_checkable
class MappedBackend(Protocol):
    """An optional backend method: the backend names this machine's paths its own way.

    A sandbox mounts the working folder at ``/workspace``; the tools then see that as their
    ``cwd`` and the model never sees host paths.
    """

    def agent_path(self, host_path: str | os.PathLike[str]) -> str:
        """The backend's name for ``host_path`` (a path under the working folder)."""
        ...


@dataclass(frozen=True)
class HostCommand:
    """A command line for this machine that runs a process inside a backend.

    Started on this machine with exactly ``env`` as its environment, it runs the process
    inside (the sandbox, with its mounts and network policy) with stdin, stdout and stderr
    connected straight through, and killing its process group ends the process inside.

    :param argv: the program and its arguments, as this machine runs them
    :param env: the environment to start it with (the values the process inside gets travel
        here, never in ``argv``, which other users can read)
    """

    argv: tuple[str, ...]
    env: Mapping[str, str]


@runtime_checkable
class HostCommands(Protocol):
    """An optional backend method: a long-lived process the caller talks to over pipes.

    :meth:`ExecutionBackend.exec` waits for a process and takes its stdin as bytes; a server
    that speaks a protocol over stdin/stdout for the whole session (an MCP stdio server) needs
    live pipes instead. A backend that can give them returns the command line that starts the
    process inside; the caller spawns it with its own pipes (and process group).
    """

    def host_command(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        scrub: Sequence[str] = (),
    ) -> HostCommand:
        """The command line that runs ``argv`` inside.

        :param cwd: the working directory, a backend path (default: the backend's own)
        :param env: variables to set on top of :meth:`ExecutionBackend.environment`
        :param scrub: names the caller's spawner adds to the host process's environment on its
            own (a library's default environment): they must not reach the process inside
            unless ``env`` sets them
        :raises OSError: this backend cannot run such a process (``ENOTSUP``), or it is not
            ready
        """
        ...


def agent_cwd(backend: ExecutionBackend, cwd: Path) -> Path:
    """The working directory as the tools on ``backend`` see it."""
    if isinstance(backend, MappedBackend):
        return Path(backend.agent_path(cwd))
    return cwd
