"""``SandboxBackend``: the :class:`knightcode.ExecutionBackend` the tools see when a sandbox is on.

It is shared by every runner (bwrap, container, gondolin) and does everything that is not
"run a process inside":

* **Paths.** The model sees the working folder as ``/workspace``
  (:class:`~knightcode_builtins.gondolin.paths.PathMapper`). Files under it are read and
  written on the host — the mount writes through, so the bytes are the same, and it is far
  faster than going through a VM — after the escape check (links leading outside are
  refused). Every other path is the sandbox's own and is reached by running ``cat``/``stat``/
  ``ls`` inside, so it can never touch the host's files.
* **grep and find.** Their ``rg`` runs on the host over the mounted folder only (links are not
  followed), with the host folder's name rewritten to ``/workspace`` in what it prints; a search
  outside the workspace is refused. Images need no ``rg`` and a search costs no VM round trips.
* **Environment** (:class:`~knightcode_builtins.gondolin.envpolicy.EnvPolicy`): what a process
  inside gets, and a screen for environments callers build themselves.
* **Commands** go to the runner with the working directory inside and a complete environment.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import posixpath
import shutil
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode import DirEntry, ExecResult, FileInfo, HostCommand, LocalBackend
from knightcode_builtins.gondolin.envpolicy import EnvPolicy
from knightcode_builtins.gondolin.paths import AGENT_ROOT, PathEscape, PathMapper
from knightcode_builtins.gondolin.probes import ProbeResult, SandboxLeak

if TYPE_CHECKING:
    from knightcode import AbortSignal, OutputCallback
    from knightcode_builtins.gondolin.config import SandboxConfig
    from knightcode_builtins.gondolin.runner import Runner

__all__ = ["SandboxBackend"]

_CHUNK = 256 * 1024
_NOTICE_AFTER = 0.5  # seconds of start-up before the user is told what is going on

# Reads and lists of sandbox-only paths, as small POSIX shell programs (busybox has all of it).
# A read refuses what `cat` would block on (a FIFO) or cannot read, with the message the error
# mapping below understands.
_READ = (
    '[ -e "$1" ] || { echo "$1: No such file or directory" >&2; exit 2; }; '
    '[ -d "$1" ] && { echo "$1: Is a directory" >&2; exit 21; }; '
    '[ -f "$1" ] || { echo "$1: not a regular file" >&2; exit 22; }; '
    'exec cat -- "$1"'
)
_WRITE = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
_STAT = 'stat -L -c "%F|%s|%Y" -- "$1"'
_LIST = 'cd -- "$1" && ls -1ApL'
_WHICH = 'command -v -- "$1"'

_ERRORS = (
    ("No such file", errno.ENOENT),
    ("Is a directory", errno.EISDIR),
    ("Not a directory", errno.ENOTDIR),
    ("Permission denied", errno.EACCES),
    ("Read-only file system", errno.EROFS),
    ("not a regular file", errno.EINVAL),
    ("No space left", errno.ENOSPC),
)


def _os_error(stderr: bytes, path: str) -> OSError:
    """The ``OSError`` a failed command inside stands for (its message says which)."""
    text = stderr.decode("utf-8", "replace").strip()
    for needle, code in _ERRORS:
        if needle in text:
            return OSError(code, os.strerror(code), path)
    return OSError(errno.EIO, text or "the command inside the sandbox failed", path)


class _Rewriter:
    """Rewrites the host folder's name to ``/workspace`` in ``rg`` output, line by line (a
    chunk may end in the middle of a path).
    """

    def __init__(self, paths: PathMapper, sink: OutputCallback | None) -> None:
        escaped = json.dumps(paths.host_root)[1:-1].encode()
        agent = paths.agent_root.encode()
        # JSON strings ("text":"/host/root/…") and plain text (error messages).
        self._pairs = [
            (b'"' + escaped + b"/", b'"' + agent + b"/"),
            (b'"' + escaped + b'"', b'"' + agent + b'"'),
            (paths.host_root.encode(), agent),
        ]
        self._sink = sink
        self._partial = b""
        self.collected: list[bytes] = []

    def rewrite(self, data: bytes) -> bytes:
        for old, new in self._pairs:
            data = data.replace(old, new)
        return data

    def feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        cut = data.rfind(b"\n") + 1
        self._partial = data[cut:]
        if cut:
            self._emit(self.rewrite(data[:cut]))

    def finish(self) -> None:
        if self._partial:
            self._emit(self.rewrite(self._partial))
            self._partial = b""

    def _emit(self, data: bytes) -> None:
        if self._sink is not None:
            self._sink(data)
        else:
            self.collected.append(data)


class SandboxBackend:
    """The tools' files and processes inside a sandbox; see the module docstring.

    :param runner: runs the processes inside the boundary
    :param host_root: the working folder on the host, mounted at ``/workspace``
    :param config: the ``sandbox`` settings
    :param host_environment: the host's variables the policy chooses from (default:
        ``os.environ``, read at each call)
    :param agent_dir: the agent directory, which the boundary check makes sure is out of reach
        (None: no check at start)
    :param state_dir: a private folder of the runner's, removed on close
    """

    def __init__(
        self,
        runner: Runner,
        host_root: str | os.PathLike[str],
        config: SandboxConfig,
        *,
        host_environment: Mapping[str, str] | None = None,
        agent_dir: Path | None = None,
        state_dir: Path | None = None,
    ) -> None:
        self.runner = runner
        self.agent_dir = agent_dir
        self.state_dir = state_dir
        self.probe_results: list[ProbeResult] = []
        self.config = config
        self.paths = PathMapper.for_folder(host_root)
        self.policy = EnvPolicy(config, runner.base_environment())
        self._host_environment = host_environment
        self._host = LocalBackend(self.paths.host_root)
        self._executables: dict[str, str | None] = {}
        self._host_rg: str | None = None

    def __repr__(self) -> str:
        return f"SandboxBackend({self.runner.name}, {self.paths.host_root!r} → {AGENT_ROOT})"

    @property
    def name(self) -> str:
        """The backend's settings name (``"bwrap"`` …)."""
        return self.runner.name

    def describe(self) -> str:
        """One line for the status bar: the runner and what is mounted."""
        return f"{self.runner.describe()}: {self.paths.host_root} → {AGENT_ROOT}"

    def agent_path(self, host_path: str | os.PathLike[str]) -> str:
        """How the model names a host path (the kernel maps the session's cwd with it)."""
        return self.paths.to_agent(os.path.realpath(os.fspath(host_path)))

    def host_environment(self) -> Mapping[str, str]:
        """The host variables the policy chooses from."""
        return self._host_environment if self._host_environment is not None else os.environ

    # --- lifecycle ---

    async def prepare(self) -> None:
        """Start the runner and check the boundary (the kernel calls this before the session
        starts, so a missing program or a leak is reported at once, not at a tool call).

        :raises SandboxUnavailable: the runner cannot start
        :raises SandboxLeak: settings ``sandbox.verify`` is on and a probe that should have
            failed succeeded (``knightcode sandbox doctor`` shows them all)
        """
        await self._start_with_notice()
        if self.config.verify and self.agent_dir is not None:
            from knightcode_builtins.gondolin.probes import leaks, run_probes

            self.probe_results = await run_probes(self, self.config, self.agent_dir)
            found = leaks(self.probe_results)
            if found:
                listed = "; ".join(f"{probe.name}: {probe.detail}" for probe in found)
                raise SandboxLeak(
                    f"the {self.name} sandbox leaks ({listed}); refusing to start. Run "
                    "'knightcode sandbox doctor' for every probe."
                )

    async def _start_with_notice(self) -> None:
        """Start the runner; a start that takes a while (a VM boots for about 10 s under TCG,
        a container image is checked) is announced on stderr, so nobody stares at nothing.
        """
        starting = asyncio.ensure_future(self.runner.start())
        done, _ = await asyncio.wait({starting}, timeout=_NOTICE_AFTER)
        if not done:
            print(f"knightcode: starting the sandbox ({self.runner.describe()}) …", file=sys.stderr)
        await starting

    async def aclose(self) -> None:
        """Stop everything the runner started and remove its private folder."""
        try:
            await self.runner.close()
        finally:
            if self.state_dir is not None:
                shutil.rmtree(self.state_dir, ignore_errors=True)

    # --- files ---

    def _host_path(self, path: str) -> str | None:
        return self.paths.to_host(path)

    async def _inside(self, script: str, path: str, *, stdin: bytes | None = None) -> ExecResult:
        return await self.runner.exec(
            [self.runner.shell(), "-c", script, "sh", path],
            cwd=AGENT_ROOT,
            env=self.environment(),
            merge_stderr=False,
            stdin=stdin,
        )

    async def read_file(self, path: str) -> bytes:
        """The whole file (see :meth:`knightcode.ExecutionBackend.read_file`)."""
        host = self._host_path(path)
        if host is not None:
            return await self._host.read_file(host)
        result = await self._inside(_READ, path)
        if result.exit_code != 0:
            raise _os_error(result.stderr, path)
        return result.output

    async def read_chunks(self, path: str, chunk_size: int = _CHUNK) -> AsyncGenerator[bytes, None]:
        """The file chunk by chunk (host side), or whole (a sandbox-only path)."""
        host = self._host_path(path)
        if host is None:
            yield await self.read_file(path)
            return
        chunks = self._host.read_chunks(host, chunk_size)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            await chunks.aclose()

    async def write_file(self, path: str, data: bytes) -> None:
        """Create or replace the file, parents included."""
        host = self._host_path(path)
        if host is not None:
            await self._host.write_file(host, data)
            return
        result = await self._inside(_WRITE, path, stdin=data)
        if result.exit_code != 0:
            raise _os_error(result.stderr, path)

    async def stat(self, path: str) -> FileInfo | None:
        """Facts about ``path``; None when missing or outside what may be reached."""
        try:
            host = self._host_path(path)
        except PathEscape:
            return None
        if host is not None:
            return await self._host.stat(host)
        result = await self._inside(_STAT, path)
        if result.exit_code != 0:
            return None
        kind, _, rest = result.output.decode("utf-8", "replace").strip().partition("|")
        size, _, mtime = rest.partition("|")
        try:
            return FileInfo(
                "regular" in kind, kind == "directory", int(size or 0), float(mtime or 0)
            )
        except ValueError:
            return None

    async def exists(self, path: str) -> bool:
        """Whether ``path`` exists."""
        return await self.stat(path) is not None

    async def list_dir(self, path: str) -> list[DirEntry]:
        """The entries of the directory ``path``."""
        host = self._host_path(path)
        if host is not None:
            return await self._host.list_dir(host)
        result = await self._inside(_LIST, path)
        if result.exit_code != 0 and not result.output:
            raise _os_error(result.stderr, path)
        entries = []
        for line in result.output.decode("utf-8", "replace").splitlines():
            if line in ("", "./", "../"):
                continue
            is_dir = line.endswith("/")
            entries.append(DirEntry(line.rstrip("/"), is_dir))
        return entries

    # --- environment ---

    def environment(self) -> Mapping[str, str]:
        """The default environment of a process inside (the policy's)."""
        return self.policy.environment(self.host_environment())

    def home(self) -> str:
        """The home directory inside, for ``~`` in paths."""
        return self.environment().get("HOME", "/root")

    async def find_executable(self, name: str) -> str | None:
        """The program ``name`` inside (``rg``: the host's, see the module docstring)."""
        if name == "rg":
            # grep and find search the mounted folder from the host (module docstring).
            self._host_rg = await self._host.find_executable("rg")
            return self._host_rg
        if name not in self._executables:
            result = await self._inside(_WHICH, name)
            found = result.output.decode("utf-8", "replace").strip()
            self._executables[name] = found if result.exit_code == 0 and found else None
        return self._executables[name]

    # --- processes ---

    def _guest_cwd(self, cwd: str | None) -> str:
        if cwd is None:
            return AGENT_ROOT
        return self.paths.to_agent(posixpath.normpath(cwd))

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
        """Run a process inside (see :meth:`knightcode.ExecutionBackend.exec`); ``cwd`` may
        be an agent or a host path under the workspace.
        """
        if (argv is None) == (shell_command is None):
            raise ValueError("exec() needs exactly one of argv and shell_command")
        if argv is not None and argv and self._host_rg is not None and argv[0] == self._host_rg:
            return await self._ripgrep(list(argv), cwd, timeout, signal, on_output, merge_stderr)
        command = (
            list(argv) if argv is not None else [self.runner.shell(), "-c", str(shell_command)]
        )
        final_env = (
            self.policy.screen(env, self.host_environment())
            if env is not None
            else dict(self.environment())
        )
        return await self.runner.exec(
            command,
            cwd=self._guest_cwd(cwd),
            env=final_env,
            timeout=timeout,
            signal=signal,
            on_output=on_output,
            merge_stderr=merge_stderr,
            stdin=stdin,
        )

    def host_command(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        scrub: Sequence[str] = (),
    ) -> HostCommand:
        """The command line that runs ``argv`` inside with live pipes (see
        :class:`knightcode.HostCommands`), for the runners that can (bwrap, container); ``env``
        is set on top of the policy's environment as given (the caller chose those values).

        :raises OSError: ``ENOTSUP`` for a runner that cannot (the micro-VM), or the sandbox is
            not ready
        """
        from knightcode_builtins.gondolin.runner import PipedRunner

        if not isinstance(self.runner, PipedRunner):
            raise OSError(
                errno.ENOTSUP,
                f"the {self.name} sandbox cannot run a long-lived process with pipes",
            )
        final_env = {**self.environment(), **(env or {})}
        return self.runner.host_command(
            list(argv), cwd=self._guest_cwd(cwd), env=final_env, scrub=tuple(scrub)
        )

    async def _ripgrep(
        self,
        argv: list[str],
        cwd: str | None,
        timeout: float | None,
        signal: AbortSignal | None,
        on_output: OutputCallback | None,
        merge_stderr: bool,
    ) -> ExecResult:
        """``rg`` on the host, confined to the mounted folder (see the module docstring)."""
        try:
            host_cwd = self._searchable(cwd if cwd is not None else AGENT_ROOT)
            if "--" in argv:
                start = argv.index("--") + 2  # after the separator and the pattern
                argv[start:] = [self._searchable(path) for path in argv[start:]]
        except OSError as error:
            message = f"rg: {error.filename}: {error.strerror}\n".encode()
            return ExecResult(2, b"" if not merge_stderr else message, stderr=message)
        rewriter = _Rewriter(self.paths, on_output)
        result = await self._host.exec(
            argv,
            cwd=host_cwd,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            timeout=timeout,
            signal=signal,
            on_output=rewriter.feed,
            merge_stderr=merge_stderr,
        )
        rewriter.finish()
        return ExecResult(
            result.exit_code,
            b"".join(rewriter.collected),
            result.timed_out,
            result.aborted,
            rewriter.rewrite(result.stderr),
        )

    def _searchable(self, path: str) -> str:
        host = self.paths.to_host(path)
        if host is None:
            raise OSError(
                errno.EACCES,
                f"outside the workspace; in this sandbox grep and find search only under "
                f"{AGENT_ROOT}",
                path,
            )
        return host
