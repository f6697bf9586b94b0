"""The ``bwrap`` runner: every command in a fresh bubblewrap sandbox.

Each :meth:`BwrapRunner.exec` starts one ``bwrap`` process (through
:meth:`knightcode.LocalBackend.exec`, which brings streaming, stdin, timeouts and process-group
kills). The sandbox it builds:

* a root assembled from parts, as the host has them: ``/usr`` read-only, ``/bin``, ``/sbin``,
  ``/lib*`` as read-only binds or as the same symlinks (merged-``/usr`` systems), ``/etc``
  read-only with its secrets masked (``/etc/shadow``, SSH host keys …), the configured
  ``sandbox.bwrap.roBinds``; a new ``/proc`` and ``/dev``; the root itself read-only, so a write
  outside ``/workspace`` and ``/tmp`` fails instead of vanishing with the sandbox. ``/root``,
  ``/home``, ``/run`` and the agent dir are never there;
* the host working folder at ``/workspace`` read-write (a bind, so writes are the host's bytes);
* ``/tmp``: a private host directory of this runner (mode 0700, under ``state_dir``), so what a
  command leaves in ``/tmp`` is there for the next command of the session; removed by
  :meth:`~BwrapRunner.close`;
* every namespace unshared (user, mount, pid, net, ipc, uts, cgroup; the network only when
  ``sandbox.network`` is off), all capabilities dropped (root on the host and an unprivileged
  user then get the same sandbox), ``--die-with-parent``, ``--new-session``.

The environment is the ``bwrap`` process's own (``env=`` of the host process), not
``--setenv`` arguments: bwrap hands its environment to the command, and a process's environment,
unlike its argv, is not readable by other users (``ps``, ``/proc/PID/cmdline``).

Killing: ``bwrap`` is the leader of its own process group. Killing that group kills bwrap, whose
death kills the sandbox's PID 1 (``--die-with-parent``), and the kernel then kills every process
left in the PID namespace — a grandchild that ignores SIGTERM or called ``setsid`` included. The
flip side: the command gets SIGKILL, never a SIGTERM grace, and a background job (``server &``)
does not outlive the command that started it.

Exit status: bwrap's own, which is the command's; a command killed by a signal inside reports
128 + the signal number (as a shell does), not None. ``exit_code`` is None only when bwrap
itself was killed (timeout, abort, cancellation).
"""

from __future__ import annotations

import asyncio
import errno
import glob
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from knightcode import AbortSignal, ExecResult, HostCommand, LocalBackend

from .runner import SandboxUnavailable

if TYPE_CHECKING:
    from knightcode import OutputCallback

    from .config import SandboxConfig

__all__ = [
    "BwrapRunner",
    "Layout",
    "Mount",
    "extra_mounts",
    "split_environment",
    "system_mounts",
]

WORKSPACE = "/workspace"
GUEST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
INSTALL_HINT = (
    "apt-get install bubblewrap  (Debian/Ubuntu) · dnf install bubblewrap  (Fedora) · "
    "pacman -S bubblewrap  (Arch)"
)
USERNS_HINT = (
    "allow unprivileged user namespaces: sysctl -w user.max_user_namespaces=15000; "
    "Debian ≤ 10: sysctl -w kernel.unprivileged_userns_clone=1; Ubuntu ≥ 23.10: "
    "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0; inside a container: a seccomp "
    "profile that allows unshare/clone (docker run --security-opt seccomp=unconfined)"
)

# Top-level entries a program may need, bound read-only or recreated as the host's symlinks.
_SYSTEM_ENTRIES = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
# Files and directories of /etc that hold secrets; masked by /dev/null or an empty tmpfs.
_SECRET_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-")
_SECRET_FILE_GLOBS = ("/etc/ssh/ssh_host_*_key",)
_SECRET_DIRS = ("/etc/ssl/private",)
# glibc drops these from the environment of a set-uid program; a set-uid bwrap gets them as
# --setenv arguments instead (their values are paths and options, not secrets).
_UNSECURE_ENV = frozenset(
    {
        "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
        "MALLOC_ARENA_MAX", "MALLOC_ARENA_TEST", "MALLOC_TRACE", "NIS_PATH", "NLSPATH",
        "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR",
    }
)  # fmt: skip
_MAX_SYMLINKS = 40


@dataclass(frozen=True)
class Mount:
    """One entry of the sandbox's file tree.

    :param kind: ``"ro-bind"``/``"bind"`` (``source`` is the host path), ``"symlink"``
        (``source`` is the link's target), ``"mask"`` (``/dev/null`` over a file),
        ``"empty"`` (a read-only empty directory over a directory), ``"proc"``/``"dev"``
        (bwrap's own ``/proc`` and ``/dev``)
    :param dest: the path inside
    """

    kind: Literal["ro-bind", "bind", "symlink", "mask", "empty", "proc", "dev"]
    dest: str
    source: str = ""

    def args(self) -> list[str]:
        """The bwrap arguments that create this entry."""
        if self.kind == "mask":
            return ["--ro-bind", "/dev/null", self.dest]
        if self.kind == "empty":
            return ["--tmpfs", self.dest, "--remount-ro", self.dest]
        if self.kind in ("proc", "dev"):
            return [f"--{self.kind}", self.dest]
        return [f"--{self.kind}", self.source, self.dest]


def system_mounts(root: Path = Path("/")) -> list[Mount]:
    """The read-only system part of the sandbox, from the host's top-level entries.

    :param root: the host's root (a fake tree in tests); paths inside are always absolute
    """
    mounts: list[Mount] = []
    for name in _SYSTEM_ENTRIES:
        host = root / name
        if host.is_symlink():
            mounts.append(Mount("symlink", f"/{name}", os.readlink(host)))
        elif host.is_dir():
            mounts.append(Mount("ro-bind", f"/{name}", str(host)))
    mounts.append(Mount("ro-bind", "/etc", str(root / "etc")))
    secret_files = [*_SECRET_FILES]
    for pattern in _SECRET_FILE_GLOBS:
        found = glob.glob(str(root) + pattern)
        secret_files += sorted("/" + os.path.relpath(path, root) for path in found)
    for path in secret_files:
        host = root / path.lstrip("/")
        if host.is_file() and not host.is_symlink():
            mounts.append(Mount("mask", path))
    for path in _SECRET_DIRS:
        if (root / path.lstrip("/")).is_dir():
            mounts.append(Mount("empty", path))
    return mounts


def extra_mounts(paths: Sequence[str]) -> list[Mount]:
    """``sandbox.bwrap.roBinds``: host directories bound read-only at the same path. They come
    after ``/tmp`` and ``/workspace``, so one below either is seen (its mount point is then
    created in the host directory behind it).

    :raises SandboxUnavailable: a path is relative or does not exist
    """
    mounts: list[Mount] = []
    for path in paths:
        if not posixpath.isabs(path):
            raise SandboxUnavailable(
                f"sandbox.bwrap.roBinds: {path!r} is not an absolute path",
                "write it as /path/to/dir",
            )
        if not os.path.exists(path):
            raise SandboxUnavailable(
                f"sandbox.bwrap.roBinds: {path} does not exist",
                "create it, or remove it from sandbox.bwrap.roBinds",
            )
        mounts.append(Mount("ro-bind", posixpath.normpath(path), os.path.realpath(path)))
    return mounts


def _resolv_conf_mounts(root: Path = Path("/")) -> list[Mount]:
    """With the network on: the file behind a symlinked ``/etc/resolv.conf`` (systemd-resolved
    points it into ``/run``, which is not in the sandbox), bound alone.
    """
    link = root / "etc/resolv.conf"
    if not link.is_symlink():
        return []
    target = os.path.realpath(link)
    inside = "/" + os.path.relpath(target, root)
    if inside.startswith(("/etc/", "/usr/")) or not os.path.isfile(target):
        return []
    return [Mount("ro-bind", inside, target)]


def split_environment(env: Mapping[str, str], *, setuid: bool) -> tuple[dict[str, str], list[str]]:
    """The bwrap process's environment, and the ``--setenv`` arguments a set-uid bwrap needs
    for the variables glibc would strip from its environment (``TMPDIR``, ``LD_*`` …).
    """
    own = dict(env)
    setenv: list[str] = []
    if setuid:
        for name in sorted(own):
            if name in _UNSECURE_ENV or name.startswith("LD_"):
                setenv += ["--setenv", name, own.pop(name)]
    return own, setenv


def _at_or_below(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


class Layout:
    """The sandbox's file tree, as far as the host can see it.

    Used before each exec to report a missing program or working directory the way a local
    ``exec`` does (``FileNotFoundError``), instead of bwrap's own error and exit status 1.
    """

    def __init__(self, mounts: Sequence[Mount]) -> None:
        self.mounts = list(mounts)
        # bwrap applies the entries in order: a later one hides what an earlier one put at or
        # below the same path.
        visible: list[Mount] = []
        for mount in self.mounts:
            visible = [m for m in visible if not _at_or_below(m.dest, mount.dest)]
            visible.append(mount)
        sources = {"bind": None, "ro-bind": None, "mask": "/dev/null", "empty": ""}
        self._binds = sorted(
            (
                (m.dest, m.source if sources[m.kind] is None else sources[m.kind])
                for m in visible
                if m.kind in sources
            ),
            key=lambda pair: len(pair[0]),
            reverse=True,
        )
        self._links = {m.dest: m.source for m in visible if m.kind == "symlink"}
        self._bind_points = {dest for dest, _ in self._binds}
        # Trees bwrap fills itself: no host file behind them to check.
        self._virtual = [m.dest for m in visible if m.kind in ("proc", "dev")]
        # Directories bwrap creates on its root to hold the mount points, and empty ones.
        self._synthetic = {"/", *(m.dest for m in visible if m.kind == "empty")}
        for mount in visible:
            parent = posixpath.dirname(mount.dest)
            while parent not in self._synthetic:
                self._synthetic.add(parent)
                parent = posixpath.dirname(parent)

    def args(self) -> list[str]:
        """The bwrap arguments of every entry, in order."""
        return [arg for mount in self.mounts for arg in mount.args()]

    def host_path(self, inside: str) -> str | None:
        """The host path behind the (symlink-free) path ``inside``, None when none is."""
        for dest, source in self._binds:
            if _at_or_below(inside, dest):
                # "": an empty directory, nothing below it
                return (source + inside[len(dest) :]) if source else None
        return None

    def _readlink(self, inside: str) -> str | None:
        if inside in self._links:
            return self._links[inside]
        if inside in self._bind_points:
            return None  # bwrap binds what a host symlink points at
        host = self.host_path(inside)
        if host is None or not os.path.islink(host):
            return None
        return os.readlink(host)

    def resolve(self, path: str) -> str:
        """``path`` (absolute, inside) with every symlink followed as the sandbox sees it.

        :raises OSError: ``ELOOP`` for a symlink loop
        """
        parts = [part for part in path.split("/") if part]
        parts.reverse()
        current = "/"
        hops = 0
        while parts:
            name = parts.pop()
            if name == ".":
                continue
            if name == "..":
                current = posixpath.dirname(current)
                continue
            candidate = posixpath.join(current, name)
            target = self._readlink(candidate)
            if target is None:
                current = candidate
                continue
            hops += 1
            if hops > _MAX_SYMLINKS:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
            parts.extend(reversed([part for part in target.split("/") if part]))
            if target.startswith("/"):
                current = "/"
        return current

    def _unchecked(self, resolved: str) -> bool:
        return any(_at_or_below(resolved, top) for top in self._virtual)

    def is_dir(self, resolved: str) -> bool:
        """Whether the resolved path inside is a directory (True for /proc, /dev paths)."""
        if resolved in self._synthetic or self._unchecked(resolved):
            return True
        host = self.host_path(resolved)
        return host is not None and os.path.isdir(host)

    def is_program(self, resolved: str) -> bool:
        """Whether the resolved path inside is an executable file (True for /proc, /dev)."""
        if self._unchecked(resolved):
            return True
        host = self.host_path(resolved)
        if host is None:
            return False
        try:
            info = os.stat(host)
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode) and bool(info.st_mode & 0o111)


def _remove_tree(path: Path) -> None:
    """Remove ``path`` even when a command left unreadable directories in it."""

    def retry(_function: object, failed: str, _error: object) -> None:
        parent = os.path.dirname(failed)
        for target in (parent, failed):
            if os.path.isdir(target) and not os.path.islink(target):
                os.chmod(target, 0o700)
        if os.path.isdir(failed) and not os.path.islink(failed):
            shutil.rmtree(failed, ignore_errors=True)
        elif os.path.lexists(failed):
            os.unlink(failed)

    if path.exists():
        shutil.rmtree(path, onerror=retry)  # onexc from Python 3.12 on


@dataclass(eq=False)
class _Running:
    """An exec in flight, so :meth:`BwrapRunner.close` can kill it and wait for it."""

    stop: AbortSignal
    done: asyncio.Event


class BwrapRunner:
    """Runs each command in a new bubblewrap sandbox; see the module docstring.

    :param host_root: the host working folder, mounted read-write at ``/workspace``
    :param config: the ``sandbox`` settings (``network``, ``bwrap.binary``, ``bwrap.roBinds``,
        ``bwrap.extraArgs``)
    :param state_dir: where the runner keeps its private ``/tmp`` (created if missing)
    """

    name = "bwrap"

    def __init__(self, host_root: Path, config: SandboxConfig, *, state_dir: Path) -> None:
        self.host_root = Path(os.path.realpath(host_root))
        self.config = config
        self.state_dir = Path(state_dir)
        self._local = LocalBackend("/")
        self._binary: str | None = None
        self._setuid = False
        self._layout: Layout | None = None
        self._tmp: Path | None = None
        self._probed = False
        self._lock = asyncio.Lock()
        self._running: set[_Running] = set()

    def __repr__(self) -> str:
        return f"BwrapRunner({str(self.host_root)!r})"

    def describe(self) -> str:
        """``bwrap``, and whether the sandbox has the network."""
        return "bwrap" + (" (network on)" if self.config.network else "")

    def base_environment(self) -> Mapping[str, str]:
        """PATH of the guest, and ``HOME=/tmp``: the one writable place that lasts the session
        (a tmpfs ``HOME`` would lose ``git config --global`` and caches after every command).
        """
        return {"PATH": GUEST_PATH, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}

    def shell(self) -> str:
        """``/bin/bash`` when the sandbox (the host's ``/usr``) has it, else ``/bin/sh``."""
        layout = self._layout or Layout(system_mounts())
        return "/bin/bash" if layout.is_program(layout.resolve("/bin/bash")) else "/bin/sh"

    # --- lifecycle ---

    async def start(self) -> None:
        """Find bwrap, make the private ``/tmp``, and once, run ``true`` in a sandbox built
        exactly as every command's is, so a missing piece shows now with a hint.

        :raises SandboxUnavailable: bwrap is missing, user namespaces are disabled, a
            ``roBinds`` path is wrong, or the working folder is gone
        """
        async with self._lock:
            await self._start()

    async def _start(self) -> None:
        if self._tmp is not None and self._tmp.is_dir() and self._probed:
            return
        if self._binary is None:
            self._binary = self._find_binary()
            self._setuid = bool(os.stat(self._binary).st_mode & stat.S_ISUID)
        if not self.host_root.is_dir():
            raise SandboxUnavailable(
                f"the working folder {self.host_root} does not exist",
                "run knightcode from an existing folder",
            )
        if self._tmp is None or not self._tmp.is_dir():
            self.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._tmp = Path(tempfile.mkdtemp(prefix="bwrap-tmp-", dir=self.state_dir))
        self._layout = Layout(self._mounts(self._tmp))
        if not self._probed:
            await self._probe()
            self._probed = True

    def _find_binary(self) -> str:
        configured = self.config.bwrap.binary
        found = shutil.which(configured)
        if found is not None:
            return os.path.abspath(found)
        if os.sep in configured:
            raise SandboxUnavailable(
                f"bwrap not found at {configured} (sandbox.bwrap.binary)", INSTALL_HINT
            )
        raise SandboxUnavailable("bwrap is not installed", INSTALL_HINT)

    def _mounts(self, tmp: Path) -> list[Mount]:
        return [
            *system_mounts(),
            Mount("proc", "/proc"),
            Mount("dev", "/dev"),
            Mount("bind", "/tmp", str(tmp)),
            Mount("bind", WORKSPACE, str(self.host_root)),
            *extra_mounts(self.config.bwrap.ro_binds),
            *(_resolv_conf_mounts() if self.config.network else []),
        ]

    async def _probe(self) -> None:
        """Run ``true`` in a sandbox built exactly as every command's is."""
        result = await self._local.exec(
            self._argv(["true"], WORKSPACE),
            env=self.base_environment(),
            merge_stderr=False,
            timeout=30,
        )
        if result.exit_code == 0:
            return
        said = (result.stderr or result.output).decode(errors="replace").strip()
        first = said.splitlines()[0] if said else f"exit status {result.exit_code}"
        lowered = said.lower()
        if "namespace" in lowered or "uid map" in lowered or "uid_map" in lowered:
            raise SandboxUnavailable(
                f"bwrap cannot create user namespaces here (they are disabled): {first}",
                USERNS_HINT,
            )
        raise SandboxUnavailable(
            f"bwrap cannot start a sandbox here: {first}",
            "try by hand: " + " ".join(self._argv(["true"], WORKSPACE)),
        )

    async def close(self) -> None:
        """Kill the commands still running (their PID namespaces go with them), wait for
        them, and remove the private ``/tmp``. Idempotent; a later ``exec`` starts again.
        """
        async with self._lock:
            running = list(self._running)
            for exec_ in running:
                exec_.stop.abort()
            for exec_ in running:
                await exec_.done.wait()
            if self._tmp is not None:
                tmp, self._tmp = self._tmp, None
                await asyncio.to_thread(_remove_tree, tmp)

    # --- processes ---

    def _argv(self, argv: Sequence[str], cwd: str) -> list[str]:
        assert self._binary is not None and self._layout is not None
        flags = ["--unshare-all", "--unshare-user"]
        if self.config.network:
            flags.append("--share-net")
        flags += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        return [
            self._binary,
            *flags,
            *self._layout.args(),
            *self.config.bwrap.extra_args,
            "--remount-ro", "/",
            "--chdir", cwd,
            "--",
            *argv,
        ]  # fmt: skip

    def _preflight(self, argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> None:
        """Raise what a local exec raises for a missing working directory or program."""
        assert self._layout is not None
        layout = self._layout
        if not layout.is_dir(layout.resolve(cwd)):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
        program = argv[0]
        if "/" in program:
            candidates = [posixpath.join(cwd, program)]
        else:
            search = env.get("PATH", "/bin:/usr/bin")
            candidates = [posixpath.join(cwd, part, program) for part in search.split(":")]
        if not any(layout.is_program(layout.resolve(path)) for path in candidates):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)

    def host_command(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], scrub: Sequence[str] = ()
    ) -> HostCommand:
        """The ``bwrap`` command line that runs ``argv`` in a new sandbox, for a caller that
        spawns it with its own pipes (see :class:`knightcode.HostCommands`): the same sandbox
        as :meth:`exec`'s. ``--unsetenv`` keeps the spawner's own additions (``scrub``) out.

        :raises OSError: the runner has not started (``prepare`` starts it), or the working
            directory or program is missing inside
        """
        if not argv:
            raise ValueError("host_command() needs a program to run")
        if self._binary is None or self._layout is None or not self._probed:
            raise OSError(errno.EAGAIN, "the bwrap sandbox has not started yet")
        inside_cwd = posixpath.normpath(posixpath.join(WORKSPACE, cwd))
        self._preflight(argv, inside_cwd, env)
        own_env, setenv = split_environment(env, setuid=self._setuid)
        command = self._argv(argv, inside_cwd)
        unset = [arg for name in scrub if name not in env for arg in ("--unsetenv", name)]
        command[1:1] = [*setenv, *unset]
        return HostCommand(tuple(command), own_env)

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
        """Run ``argv`` in a new sandbox; see :meth:`Runner.exec`.

        ``cwd`` is a path inside (relative: to ``/workspace``). A missing working directory or
        program raises ``FileNotFoundError`` before bwrap starts, as a local exec does (the
        sandbox's files are host files, so the host can tell).
        """
        if not argv:
            raise ValueError("exec() needs a program to run")
        if signal is not None and signal.aborted:
            return ExecResult(None, aborted=True)
        async with self._lock:
            await self._start()
        inside_cwd = posixpath.normpath(posixpath.join(WORKSPACE, cwd))
        self._preflight(argv, inside_cwd, env)
        own_env, setenv = split_environment(env, setuid=self._setuid)
        command = self._argv(argv, inside_cwd)
        if setenv:
            command[1:1] = setenv
        running = _Running(AbortSignal(), asyncio.Event())
        unlink = signal.on_abort(running.stop.abort) if signal is not None else None
        self._running.add(running)
        try:
            return await self._local.exec(
                command,
                env=own_env,
                timeout=timeout,
                signal=running.stop,
                on_output=on_output,
                merge_stderr=merge_stderr,
                stdin=stdin,
            )
        finally:
            if unlink is not None:
                unlink()
            self._running.discard(running)
            running.done.set()
