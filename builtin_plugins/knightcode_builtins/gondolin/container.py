"""The ``container`` runner: one long-lived container per agent session, driven by the docker
or podman command line.

Why it is built the way it is:

* **One container, many execs.** ``run -d`` once (a few hundred ms), then ``exec`` per command
  (≈ 0.15 s with podman here), instead of a ``run`` per command; the container is labelled with
  the session and the owning host process, so a later start removes containers whose owner died
  (``knightcode.pid`` not alive).
* **Killing through a PID file.** ``docker exec`` does not forward signals, and killing the
  client leaves the process running inside (docker/cli#5309; there is no exec-kill API). Every
  exec therefore runs a small ``sh`` wrapper that records its process group in
  ``/tmp/.kc/<exec-id>.pid`` inside; a timeout, an abort or a cancellation runs a second exec that
  sends TERM to that group, waits a short grace, then KILL. The same works with podman.
* **A header line.** Before it starts the command the wrapper prints one line on stdout
  (``KC1 ok``, or ``KC1 nocwd``/``KC1 noprog`` when the cwd or the program is missing), which
  this module strips. It tells "the client could not reach the container" (no header: the
  container died → start a new one and retry) apart from "the command ran and failed", without
  mixing the client's own error text into the command's output.
* **Environment through ``--env-file``** (mode 0600, deleted after the exec), never ``-e K=V``:
  the values would show in the host's ``ps``. The format has no way to write a newline, so such
  values travel escaped (``printf %b``) and the wrapper decodes them.
* **Nothing hard-coded for this machine.** Podman here needs ``--runtime runc`` and lowered
  ``--ulimit`` values; they come from settings (``sandbox.container.runtime``/``ulimits``), and
  the two known failures are recognised and answered with the exact setting to add.
* **No silent pull.** A missing image is an error that says how to get it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import os
import re
import secrets
import shutil
import signal as signals
import socket
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode import AbortSignal, ExecResult, HostCommand

from .runner import SandboxUnavailable

if TYPE_CHECKING:
    from knightcode import OutputCallback

    from .config import SandboxConfig


__all__ = ["ContainerRunner", "choose_cli"]

WORKSPACE = "/workspace"
_BASE_ENVIRONMENT: Mapping[str, str] = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
    "TMPDIR": "/tmp",
}
_LABEL = "knightcode.session"
_HEADER = b"KC1 "
_READ_SIZE = 64 * 1024
# Seconds a `cli` housekeeping command (run, rm, inspect, the kill exec) may take.
_CLI_TIMEOUT = 60.0
# After the inside kill, the client normally exits at once; it is killed on the host after this.
_CLIENT_EXIT_WAIT = 5.0

# PID 1 of the container: sleeps, reaps orphans (sh's `wait`) and leaves at once on TERM.
_KEEPER = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"

# The exec wrapper, run as `sh -c 'eval "$KC_W"' kc <exec-id> <cwd> <argv...>` with the script
# itself in the env file (one line: the env-file format has no line breaks), which keeps the
# inside `ps` readable. It checks the cwd and the program, prints the header, decodes the
# escaped variables listed in KC_ESCAPED, records its process group and runs the command as its
# child. It is the group leader when the runtime made it a session leader (runc does); otherwise
# the command is started under setsid, in the background with stdin handed over explicitly.
_WRAPPER = "; ".join(
    [
        "unset KC_W",
        "d=/tmp/.kc",
        "id=$1",
        "cd \"$2\" 2>/dev/null || { echo 'KC1 nocwd'; exit 127; }",
        "shift 2",
        'case $1 in */*) [ -f "$1" ] && [ -x "$1" ] ;; *) command -v "$1" >/dev/null 2>&1 ;; esac'
        " || { echo 'KC1 noprog'; exit 127; }",
        'for n in $KC_ESCAPED; do eval "v=\\$$n"; v=$(printf \'%bx\' "$v")'
        '; export "$n=${v%x}"; done',
        "unset KC_ESCAPED n v",
        "mkdir -p $d 2>/dev/null",
        "[ -e $d/$id.cancel ] && { echo 'KC1 cancelled'; exit 143; }",
        "pg=",
        "read -r _ _ _ _ pg _ 2>/dev/null </proc/$$/stat",
        "echo 'KC1 ok'",
        'if [ "$pg" = "$$" ]; then echo $$ >$d/$id.pid 2>/dev/null; "$@"; rc=$?'
        '; else exec 3<&0; setsid "$@" <&3 3<&- & echo $! >$d/$id.pid 2>/dev/null; wait $!; rc=$?'
        "; fi",
        "rm -f $d/$id.pid",
        "exit $rc",
    ]
)
_RUN_WRAPPER = 'eval "$KC_W"'

# The killer: `sh -c KILLER kc <exec-id> <grace-steps>`. Marks the exec cancelled (a wrapper
# that starts later exits at once), waits briefly for its PID file, TERMs the group, waits up to
# the grace while the group lives, then KILLs it.
_KILLER = r"""
d=/tmp/.kc; id=$1; steps=$2
mkdir -p $d 2>/dev/null; : >$d/$id.cancel
i=0; while [ ! -s $d/$id.pid ] && [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done
[ -s $d/$id.pid ] || exit 0
p=$(cat $d/$id.pid)
kill -TERM -$p 2>/dev/null
i=0; while kill -0 -$p 2>/dev/null && [ $i -lt $steps ]; do sleep 0.05; i=$((i+1)); done
kill -KILL -$p 2>/dev/null
rm -f $d/$id.pid $d/$id.cancel
"""

# What the image offers, probed once per container: bash, and a way to give each command its
# own process group (the runtime makes execs group leaders, or setsid exists).
_PROBE = (
    "[ -x /bin/bash ] && echo bash; command -v setsid >/dev/null 2>&1 && echo setsid; "
    'pg=; read -r _ _ _ _ pg _ 2>/dev/null </proc/$$/stat; [ "$pg" = "$$" ] && echo leader; :'
)

# docker and podman read --env-file with Go's bufio.Scanner: 64 KiB per line at most.
_ENV_LINE_MAX = 64 * 1024 - 1
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _shell_name_ok(name: str) -> bool:
    return bool(_NAME_RE.match(name))


@dataclass(frozen=True)
class _CliResult:
    code: int
    out: str
    err: str


async def _run_cli(argv: Sequence[str], *, timeout: float = _CLI_TIMEOUT) -> _CliResult:
    """Run a housekeeping command of the CLI (not a user's command) and collect its output.

    :raises SandboxUnavailable: the program cannot be started
    """
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise SandboxUnavailable(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except BaseException:
        _kill_group(process.pid, signals.SIGKILL)
        with contextlib.suppress(BaseException):
            await asyncio.shield(process.wait())
        raise
    code = process.returncode if process.returncode is not None else -1
    return _CliResult(code, out.decode(errors="replace"), err.decode(errors="replace"))


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def choose_cli(configured: str | None) -> str:
    """The container program: the configured one, else ``docker`` when its daemon answers
    (``docker info``), else ``podman``.

    :raises SandboxUnavailable: the configured program is missing, or neither works
    """
    if configured:
        found = shutil.which(configured)
        if found is None:
            raise SandboxUnavailable(
                f"sandbox.container.cli {configured!r} was not found",
                "install it, or set sandbox.container.cli to docker or podman",
            )
        return found
    docker = shutil.which("docker")
    if docker is not None:
        with contextlib.suppress(SandboxUnavailable, TimeoutError):
            if (await _run_cli([docker, "info"], timeout=15.0)).code == 0:
                return docker
    podman = shutil.which("podman")
    if podman is not None:
        return podman
    if docker is not None:
        raise SandboxUnavailable(
            "the docker client is installed but no Docker daemon answers, and podman is missing",
            "start the Docker daemon, or install podman (apt-get install podman)",
        )
    raise SandboxUnavailable(
        "neither docker nor podman is installed",
        "install podman (apt-get install podman) or Docker, or set sandbox.container.cli",
    )


def _process_start(pid: int) -> str:
    """The start time of ``pid`` (Linux ``/proc``), so a reused PID is not taken for ours."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19] if ")" in stat else ""


def _owner_alive(pid_label: str, start_label: str) -> bool:
    try:
        pid = int(pid_label)
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not start_label or not _process_start(pid) or _process_start(pid) == start_label


def _env_file_lines(env: Mapping[str, str]) -> str:
    """The ``--env-file`` text for ``env``; values with line breaks are escaped for the wrapper.

    :raises ValueError: a name the file format (or the shell) cannot carry
    """
    lines: list[str] = []
    escaped: list[str] = []
    for name, value in env.items():
        if not name or "=" in name or "\0" in name or name != name.strip() or name[0] == "#":
            raise ValueError(f"environment variable name {name!r} cannot be passed to a container")
        if "\n" in name or "\r" in name or name in ("KC_ESCAPED", "KC_W"):
            raise ValueError(f"environment variable name {name!r} cannot be passed to a container")
        if "\n" in value or "\r" in value:
            if not _shell_name_ok(name):
                raise ValueError(
                    f"environment variable {name!r} has a multi-line value and a name the "
                    "sandbox shell cannot set"
                )
            value = (
                value.replace("\\", "\\\\")
                .replace("\n", "\\n")
                .replace("\r", "\\r")
                .replace("\t", "\\t")
            )
            escaped.append(name)
        line = f"{name}={value}\n"
        if len(line.encode(errors="surrogateescape")) > _ENV_LINE_MAX:
            raise ValueError(
                f"environment variable {name!r} is too long for a container's env file "
                f"(at most {_ENV_LINE_MAX // 1024} KiB per variable)"
            )
        lines.append(line)
    if escaped:
        lines.append(f"KC_ESCAPED={' '.join(escaped)}\n")
    lines.append(f"KC_W={_WRAPPER}\n")
    return "".join(lines)


def _run_failure(cli: str, image: str, stderr: str) -> SandboxUnavailable:
    """A failed ``run`` explained, with the settings fix for the failures known to happen."""
    text = stderr.strip()
    last = text.splitlines()[-1] if text else "no message"
    lowered = text.lower()
    name = os.path.basename(cli)
    if "hybrid" in lowered and "cgroup" in lowered:
        return SandboxUnavailable(
            f"{name} cannot start containers: its OCI runtime refuses this machine's cgroup "
            f"layout ({last})",
            'use runc: settings "sandbox": {"container": {"runtime": "runc"}} '
            "(apt-get install runc)",
        )
    if "rlimit" in lowered and ("not permitted" in lowered or "eperm" in lowered):
        return SandboxUnavailable(
            f"{name} cannot raise the container's resource limits here ({last})",
            'lower them: settings "sandbox": {"container": {"ulimits": '
            '["nofile=1024:1024", "nproc=1024:1024"]}}',
        )
    if "cannot connect to the docker daemon" in lowered:
        return SandboxUnavailable(
            f"no Docker daemon answers ({last})",
            'start the Docker daemon, or use podman: "sandbox": {"container": {"cli": "podman"}}',
        )
    return SandboxUnavailable(
        f"{name} could not start a container from {image}: {last}",
        "check the image and sandbox.container settings (runtime, ulimits, extraArgs)",
    )


class _Exec:
    """One command's client process on the host and what it has said so far."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        on_output: OutputCallback | None,
        merge_stderr: bool,
    ) -> None:
        self.process = process
        self.collected: list[bytes] = []
        self.errors: list[bytes] = []
        self._sink: OutputCallback = on_output or self.collected.append
        self._err_sink: OutputCallback = self._sink if merge_stderr else self.errors.append
        self._head = b""
        self.header: str | None = None
        self.early_stderr: list[bytes] = []
        self.readers = [
            asyncio.ensure_future(self._read(process.stdout, self._on_stdout)),
            asyncio.ensure_future(self._read(process.stderr, self._on_stderr)),
        ]

    @staticmethod
    async def _read(stream: asyncio.StreamReader | None, sink: OutputCallback) -> None:
        if stream is None:
            return
        while chunk := await stream.read(_READ_SIZE):
            sink(chunk)

    def _on_stdout(self, chunk: bytes) -> None:
        if self.header is not None:
            self._sink(chunk)
            return
        self._head += chunk
        line, newline, rest = self._head.partition(b"\n")
        if not newline:
            if len(self._head) < 64:
                return
            line, rest = b"KC1 garbled", self._head  # not our wrapper speaking: pass it on
        self._head = b""
        self.header = line.removeprefix(_HEADER).decode(errors="replace").strip()
        for early in self.early_stderr:
            self._err_sink(early)
        self.early_stderr.clear()
        if rest:
            self._sink(rest)

    def _on_stderr(self, chunk: bytes) -> None:
        # Until the header arrived, stderr may be the client's own complaint (no container).
        if self.header is None:
            self.early_stderr.append(chunk)
        else:
            self._err_sink(chunk)

    async def finish(self) -> int:
        """Wait for both pipes to close and the client to exit; its exit code (-N: signal N)."""
        await asyncio.gather(*self.readers)
        code = await self.process.wait()
        if self.header is None and self._head:
            self.early_stderr.insert(0, self._head)
        return code

    def abandon(self) -> None:
        """Kill the client on the host and stop reading (the command inside is not reached)."""
        _kill_group(self.process.pid, signals.SIGKILL)
        for reader in self.readers:
            reader.cancel()


class ContainerRunner:
    """A :class:`~knightcode_builtins.gondolin.runner.Runner` inside a docker/podman container.

    :param host_root: the host folder mounted read-write at ``/workspace``
    :param config: the ``sandbox`` settings (``container`` section, ``network``)
    :param session_id: the agent session, recorded as the container's ``knightcode.session``
        label and part of its name
    :param state_dir: a host folder for this runner's private files (the 0600 env files)
    :param kill_grace: seconds between TERM and KILL when a timeout kills a command
    :param abort_grace: the same when an abort or a cancellation kills it
    """

    name = "container"

    def __init__(
        self,
        host_root: Path,
        config: SandboxConfig,
        *,
        session_id: str,
        state_dir: Path,
        kill_grace: float = 0.5,
        abort_grace: float = 0.1,
    ) -> None:
        self.host_root = Path(host_root).resolve()
        self.config = config
        self.session_id = session_id
        self.state_dir = Path(state_dir)
        self.kill_grace = kill_grace
        self.abort_grace = abort_grace
        self.cli: str | None = None
        self.container: str | None = None
        self._shell = "/bin/sh"
        self._env_dir: Path | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self._running: set[_Exec] = set()
        self._kills: set[asyncio.Task[None]] = set()

    # --- the Runner protocol: descriptions ---

    def describe(self) -> str:
        """``"podman container kc-… (image)"``."""
        image = self.config.container.image
        if self.cli is None or self.container is None:
            return f"container (not started; image {image})"
        return f"{os.path.basename(self.cli)} container {self.container} ({image})"

    def base_environment(self) -> Mapping[str, str]:
        """The usual Linux PATH, ``HOME=/root`` and ``TMPDIR=/tmp``."""
        return _BASE_ENVIRONMENT

    def shell(self) -> str:
        """``/bin/bash`` when the image has it (probed once the container runs), else
        ``/bin/sh``; call :meth:`start` first for the probed answer.
        """
        return self._shell

    # --- lifecycle ---

    async def start(self) -> None:
        """Start the session's container (once), removing stale ones of dead owners first.

        :raises SandboxUnavailable: no container program, the image is missing, or the engine
            refused to start it (with the settings fix when the failure is a known one)
        """
        async with self._lock:
            if self._closed:
                raise SandboxUnavailable("the container runner was closed")
            if self.container is None:
                await self._start_container()

    async def _start_container(self) -> None:
        if self.cli is None:
            self.cli = await choose_cli(self.config.container.cli)
        if ":" in str(self.host_root):
            raise SandboxUnavailable(
                f"the working folder {self.host_root} contains ':', which a bind mount cannot name",
                "run knightcode from a folder whose path has no ':'",
            )
        if self._env_dir is None:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self._env_dir = Path(tempfile.mkdtemp(prefix="container-env-", dir=self.state_dir))
        name = self._container_name()
        collect = asyncio.ensure_future(self._remove_stale())  # meanwhile
        # `run` is never killed half-way: the engine's monitor (conmon) outlives a killed client
        # and would create the container after any clean-up. A cancelled start lets it finish,
        # then removes what it made.
        running = asyncio.ensure_future(_run_cli(self._run_argv(name)))
        try:
            try:
                result = await asyncio.shield(running)
            finally:
                # Inside the clean-up's reach: a cancel (or a failure) here, after `run` made
                # the container but before it is recorded, must remove it too.
                await collect
        except BaseException:
            cleanup = asyncio.ensure_future(self._remove_unstarted(running, name))
            with contextlib.suppress(BaseException):
                await asyncio.shield(cleanup)
            raise
        if result.code != 0:
            image = self.config.container.image
            if (await _run_cli([self.cli, "image", "inspect", image])).code != 0:
                raise SandboxUnavailable(
                    f"image {image} not found locally",
                    f"pull it with: {os.path.basename(self.cli)} pull {image}, "
                    "or set sandbox.container.image",
                )
            raise _run_failure(self.cli, image, result.err)
        self.container = name
        atexit.register(self._remove_at_exit)
        probe = await _run_cli([self.cli, "exec", name, "sh", "-c", _PROBE])
        if probe.code != 0:
            await self._remove_container()
            raise SandboxUnavailable(
                f"the image {self.config.container.image} cannot run /bin/sh "
                f"({probe.err.strip() or probe.code})",
                "the container backend needs an image with a POSIX shell at /bin/sh",
            )
        features = probe.out.split()
        if "leader" not in features and "setsid" not in features:
            await self._remove_container()
            raise SandboxUnavailable(
                f"the image {self.config.container.image} has no setsid, which this container "
                "runtime needs to stop whole command trees",
                "use an image with setsid (util-linux or busybox)",
            )
        self._shell = "/bin/bash" if "bash" in features else "/bin/sh"

    async def _remove_unstarted(self, running: asyncio.Future[_CliResult], name: str) -> None:
        """After a cancelled or failed start: wait for ``run`` to end, then remove ``name``."""
        assert self.cli is not None
        with contextlib.suppress(BaseException):
            await running
        with contextlib.suppress(SandboxUnavailable, TimeoutError):
            await _run_cli([self.cli, "rm", "-f", name])
            # and anything else of this session's, should the engine have been slower still
            label = f"label={_LABEL}={self.session_id}"
            listed = await _run_cli([self.cli, "ps", "-a", "-q", "--filter", label])
            if listed.code == 0 and listed.out.split():
                await _run_cli([self.cli, "rm", "-f", *listed.out.split()])

    def _container_name(self) -> str:
        session = re.sub(r"[^A-Za-z0-9_.-]", "", self.session_id)[:12] or "session"
        return f"kc-{session}-{secrets.token_hex(3)}"

    def _run_argv(self, name: str) -> list[str]:
        assert self.cli is not None
        spec = self.config.container
        pid = os.getpid()
        argv = [
            self.cli,
            "run",
            "-d",
            "--rm",
            "--pull",
            "never",
            "--name",
            name,
            "--label",
            f"{_LABEL}={self.session_id}",
            "--label",
            f"knightcode.pid={pid}",
            "--label",
            f"knightcode.pidstart={_process_start(pid)}",
            "--label",
            f"knightcode.host={socket.gethostname()}",
            "-v",
            f"{self.host_root}:{WORKSPACE}:rw",
            "-w",
            WORKSPACE,
        ]
        if not self.config.network:
            argv += ["--network", "none"]
        if spec.runtime:
            argv += ["--runtime", spec.runtime]
        for ulimit in spec.ulimits:
            argv += ["--ulimit", ulimit]
        # --entrypoint: an image made to run a program (ENTRYPOINT ["knightcode"]) still runs
        # our keeper
        argv += [*spec.extra_args, "--entrypoint", "sh", spec.image, "-c", _KEEPER]
        return argv

    async def _remove_stale(self) -> None:
        """Remove labelled containers of this host whose owning process is gone (best effort)."""
        with contextlib.suppress(SandboxUnavailable, TimeoutError):
            await self._remove_stale_containers()

    async def _remove_stale_containers(self) -> None:
        assert self.cli is not None
        listed = await _run_cli([self.cli, "ps", "-a", "-q", "--filter", f"label={_LABEL}"])
        ids = listed.out.split()
        if listed.code != 0 or not ids:
            return
        template = (
            '{{.Name}}\t{{index .Config.Labels "knightcode.pid"}}\t'
            '{{index .Config.Labels "knightcode.pidstart"}}\t'
            '{{index .Config.Labels "knightcode.host"}}'
        )
        inspected = await _run_cli([self.cli, "inspect", "--format", template, *ids])
        stale: list[str] = []
        for line in inspected.out.splitlines():
            parts = line.split("\t")
            if len(parts) != 4:
                continue
            name, pid, start, host = parts
            if host == socket.gethostname() and not _owner_alive(pid, start):
                stale.append(name.lstrip("/"))
        if stale:
            await _run_cli([self.cli, "rm", "-f", *stale])

    async def close(self) -> None:
        """Remove the container (which ends every process in it) and the env-file folder."""
        async with self._lock:
            self._closed = True
            await self._remove_container()
            for running in list(self._running):
                running.abandon()
            for kill in list(self._kills):
                kill.cancel()
            if self._kills:
                await asyncio.gather(*self._kills, return_exceptions=True)
            if self._env_dir is not None:
                shutil.rmtree(self._env_dir, ignore_errors=True)
                self._env_dir = None

    async def _remove_container(self) -> None:
        name, self.container = self.container, None
        if name is None or self.cli is None:
            return
        atexit.unregister(self._remove_at_exit)
        with contextlib.suppress(SandboxUnavailable, TimeoutError):
            await _run_cli([self.cli, "rm", "-f", name])

    def _remove_at_exit(self) -> None:
        if self.container is not None and self.cli is not None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(
                    [self.cli, "rm", "-f", self.container],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=30,
                    check=False,
                )

    async def _restart_if_dead(self, name: str) -> bool:
        """Whether the container ``name`` is gone (then a new one is started)."""
        async with self._lock:
            if self._closed:
                raise SandboxUnavailable("the container runner was closed")
            if self.container != name:
                return True  # someone already replaced it
            assert self.cli is not None
            state = await _run_cli([self.cli, "inspect", "--format", "{{.State.Running}}", name])
            if state.code == 0 and state.out.strip() == "true":
                return False
            await self._remove_container()
            await self._start_container()
            return True

    # --- processes ---

    async def exec(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_output: OutputCallback | None = None,
        merge_stderr: bool = True,
        stdin: bytes | None = None,
    ) -> ExecResult:
        """Run ``argv`` in the container; see :meth:`Runner.exec`.

        :raises ValueError: an environment variable the env file cannot carry
        """
        if not argv:
            raise ValueError("exec() needs a program")
        if signal is not None and signal.aborted:
            return ExecResult(None, aborted=True)
        env_text = _env_file_lines(env)
        if self.container is None:
            await self.start()
        failure = ""
        for attempt in range(2):
            name = self.container
            assert name is not None and self.cli is not None
            outcome = await self._exec_in(
                name, argv, cwd, env_text, timeout, signal, on_output, merge_stderr, stdin
            )
            if isinstance(outcome, ExecResult):
                return outcome
            failure = outcome
            # The client never reached the command: a dead container is replaced once.
            if attempt == 0 and not await self._restart_if_dead(name):
                break
        cli = os.path.basename(self.cli or "container")
        raise SandboxUnavailable(
            f"{cli} exec in container {self.container} failed: {failure or 'no message'}",
            "see sandbox.container settings; `knightcode sandbox doctor` probes the container",
        )

    def host_command(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], scrub: Sequence[str] = ()
    ) -> HostCommand:
        """``<cli> exec -i`` of ``argv`` in the session's container, for a caller that spawns
        it with its own pipes (see :class:`knightcode.HostCommands`). Without the wrapper (its
        header line would corrupt a protocol on stdout), so: the environment goes in an env
        file kept until :meth:`close` (the client reads it when it starts), a multi-line value
        cannot be carried, and killing the client leaves the process to end on its stdin's end
        of file (MCP servers do) or with the container. ``scrub`` needs nothing: the process
        gets the env file's variables and the image's only.

        :raises OSError: the container has not started (``prepare`` starts it), or a value
            the env file cannot carry
        """
        if not argv:
            raise ValueError("host_command() needs a program")
        if self.container is None or self.cli is None or self._env_dir is None:
            raise OSError(errno.EAGAIN, "the container has not started yet")
        try:
            _env_file_lines(env)  # the names' checks
        except ValueError as error:
            raise OSError(errno.EINVAL, str(error)) from None
        if any("\n" in value or "\r" in value for value in env.values()):
            raise OSError(errno.EINVAL, "a multi-line variable cannot reach a piped process")
        env_file = self._env_dir / f"pipe-{secrets.token_hex(8)}.env"
        fd = os.open(env_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write("".join(f"{name}={value}\n" for name, value in env.items()))
        client = [self.cli, "exec", "-i", "--env-file", str(env_file), "--workdir", cwd]
        return HostCommand((*client, self.container, *argv), dict(os.environ))

    async def _exec_in(
        self,
        name: str,
        argv: Sequence[str],
        cwd: str,
        env_text: str,
        timeout: float | None,
        signal: AbortSignal | None,
        on_output: OutputCallback | None,
        merge_stderr: bool,
        stdin: bytes | None,
    ) -> ExecResult | str:
        """Run one command in container ``name``; the client's complaint (a string) when it
        never reached the command.
        """
        assert self.cli is not None and self._env_dir is not None
        exec_id = secrets.token_hex(8)
        env_file = self._env_dir / f"{exec_id}.env"
        fd = os.open(env_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(env_text)
        try:
            client = [self.cli, "exec", "-i", "--env-file", str(env_file), name]
            client += ["sh", "-c", _RUN_WRAPPER, "kc", exec_id, cwd, *argv]
            process = await asyncio.create_subprocess_exec(
                *client,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            running = _Exec(process, on_output, merge_stderr)
            self._running.add(running)
            try:
                return await self._follow(running, name, exec_id, cwd, argv, timeout, signal, stdin)
            finally:
                self._running.discard(running)
        finally:
            with contextlib.suppress(OSError):
                env_file.unlink()

    async def _follow(
        self,
        running: _Exec,
        name: str,
        exec_id: str,
        cwd: str,
        argv: Sequence[str],
        timeout: float | None,
        signal: AbortSignal | None,
        stdin: bytes | None,
    ) -> ExecResult | str:
        feeding = asyncio.ensure_future(self._feed(running.process, stdin))
        finished = asyncio.ensure_future(running.finish())
        timed_out = aborted = False
        try:
            outcome = await (signal or AbortSignal()).outlast(finished, timeout)
            timed_out, aborted = outcome == "timed_out", outcome == "aborted"
            if aborted or timed_out:
                grace = self.abort_grace if aborted else self.kill_grace
                await self._kill_inside(name, exec_id, grace)
                try:
                    await asyncio.wait_for(asyncio.shield(finished), _CLIENT_EXIT_WAIT)
                except TimeoutError:
                    running.abandon()
                    with contextlib.suppress(BaseException):
                        await finished
        except asyncio.CancelledError:
            # The caller gave up on us: the tree inside must still die. Kill it before
            # re-raising (shielded, so a second cancellation leaves it running to the end).
            kill = asyncio.ensure_future(self._kill_inside(name, exec_id, self.abort_grace))
            self._kills.add(kill)
            kill.add_done_callback(self._kills.discard)
            with contextlib.suppress(BaseException):
                await asyncio.shield(kill)
            running.abandon()
            raise
        finally:
            feeding.cancel()
            if not finished.done():
                running.abandon()
                finished.cancel()
        code = finished.result() if finished.done() and not finished.cancelled() else -1
        if running.header is None:
            if aborted or timed_out:
                return ExecResult(None, timed_out=timed_out, aborted=aborted)
            text = b"".join(running.early_stderr).decode(errors="replace").strip()
            return text.splitlines()[-1] if text else f"exit status {code}"
        if running.header == "nocwd":
            raise FileNotFoundError(errno.ENOENT, "no such directory inside the sandbox", cwd)
        if running.header == "noprog":
            raise FileNotFoundError(errno.ENOENT, "no such program inside the sandbox", argv[0])
        exit_code: int | None = code if code >= 0 else None
        if aborted or timed_out:
            exit_code = None
        return ExecResult(
            exit_code,
            b"".join(running.collected),
            timed_out,
            aborted,
            b"".join(running.errors),
        )

    @staticmethod
    async def _feed(process: asyncio.subprocess.Process, data: bytes | None) -> None:
        pipe = process.stdin
        if pipe is None:
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if data:
                pipe.write(data)
                await pipe.drain()
        pipe.close()

    async def _kill_inside(self, name: str, exec_id: str, grace: float) -> None:
        """TERM the command's process group inside, wait up to ``grace``, then KILL it."""
        if self.cli is None:
            return
        steps = str(max(1, round(grace / 0.05)))
        with contextlib.suppress(SandboxUnavailable, TimeoutError):
            await _run_cli(
                [self.cli, "exec", name, "sh", "-c", _KILLER, "kc", exec_id, steps],
                timeout=_CLI_TIMEOUT,
            )
