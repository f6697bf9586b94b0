"""``GondolinRunner``: processes inside a Gondolin micro-VM, through the Node bridge.

One VM per runner, booted lazily by the first ``exec`` (about 10 s under TCG), with the host
working folder mounted read-write at ``/workspace`` (Gondolin's ``RealFSProvider``). Each
``exec`` is one bridge request; a timeout, an abort or a cancellation sends the bridge a
``kill``, which signals the command's whole process group *inside* the guest (Gondolin's own
abort leaves the guest process running).

The bridge runs with a private ``TMPDIR`` (Gondolin leaves qcow2 overlays and sockets there when
it is killed) and a private session registry; both are deleted on close. ``accel: "auto"`` tries
KVM with a short boot and falls back to TCG — KVM can be present and still crash QEMU (it does on
the machines this was written on).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode import Aborted, AbortSignal, ExecResult
from knightcode_builtins.gondolin import node as prerequisites
from knightcode_builtins.gondolin.bridge import Bridge, BridgeError, Event, exec_fields
from knightcode_builtins.gondolin.config import SandboxConfig
from knightcode_builtins.gondolin.runner import SandboxUnavailable

if TYPE_CHECKING:
    from knightcode import OutputCallback

__all__ = ["GondolinRunner"]

# The guest init's own defaults (Gondolin's /init exports them before starting sandboxd).
_BASE_ENVIRONMENT = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "TMPDIR": "/tmp"}
# A KVM probe boot: a working KVM boots in about a second; a broken one hangs or aborts.
_KVM_PROBE_TIMEOUT = 30.0
# Unix socket paths are limited to 107 bytes; Gondolin puts ~45-byte socket names in TMPDIR.
_MAX_TMPDIR = 60
# How long to wait for the exit of a command after the kill request, before giving up on the VM.
_KILL_DEADLINE = 15.0


class GondolinRunner:
    """Runs processes inside a Gondolin micro-VM; see the module docstring.

    :param host_root: the host folder mounted at ``/workspace``
    :param config: the ``sandbox`` settings (``config.gondolin`` and ``config.network``)
    :param state_dir: where the runner keeps its temporary files (deleted on close)
    :param kill_grace: seconds between TERM and KILL when a timeout kills a command
    :param abort_grace: the same for an abort (short: the person is waiting)
    :param needs: Node, package, guest and QEMU already found (tests, ``sandbox doctor``);
        None: found from ``config.gondolin`` at the first start, installing the package if needed
    """

    name = "gondolin"

    def __init__(
        self,
        host_root: Path,
        config: SandboxConfig,
        *,
        state_dir: Path,
        kill_grace: float = 0.5,
        abort_grace: float = 0.05,
        needs: prerequisites.Prerequisites | None = None,
    ) -> None:
        self.host_root = Path(host_root).resolve()
        self.config = config
        self.state_dir = Path(state_dir)
        self.kill_grace = kill_grace
        self.abort_grace = abort_grace
        self._needs = needs
        self._accel: str | None = None if config.gondolin.accel == "auto" else config.gondolin.accel
        self._bridge: Bridge | None = None
        self._tmp: Path | None = None
        self._shell = "/bin/sh"
        self._starting: asyncio.Task[Bridge] | None = None
        self.boot_seconds: float | None = None
        """How long the last boot took (the bridge's ``bootMs``), for the status line and bench."""

    # --- what the backend asks ---

    def describe(self) -> str:
        """``"gondolin micro-VM (tcg)"``."""
        return f"gondolin micro-VM ({self._accel or 'auto'})"

    def base_environment(self) -> Mapping[str, str]:
        """The guest init's defaults: ``PATH``, ``HOME``, ``TMPDIR``."""
        return dict(_BASE_ENVIRONMENT)

    @property
    def bridge_pid(self) -> int | None:
        """The running bridge's pid (its process group holds QEMU too), or None."""
        bridge = self._bridge
        return bridge.pid if bridge is not None and bridge.alive else None

    @property
    def temp_dir(self) -> Path | None:
        """The bridge's private TMPDIR while it runs (deleted with it), or None."""
        return self._tmp

    def shell(self) -> str:
        """``/bin/bash`` when the guest has it, else ``/bin/sh`` (known after the first boot)."""
        return self._shell

    # --- lifecycle ---

    async def start(self) -> None:
        """Boot the VM unless it runs; idempotent, and again after the bridge died.

        :raises SandboxUnavailable: a prerequisite is missing, or the VM does not boot
        """
        await self._running()

    async def _running(self) -> Bridge:
        """The ready bridge, booting one when there is none (or it died).

        The boot is the runner's own task, shared by every caller and shielded from them: a
        caller that is aborted or cancelled while it waits leaves the boot going for the next.
        """
        task = self._starting
        if task is not None and task.done():
            bridge = None if task.cancelled() or task.exception() else task.result()
            if bridge is not None and bridge is self._bridge and bridge.alive:
                return bridge
            task = None
        if task is None:
            task = self._starting = asyncio.ensure_future(self._start())
            task.add_done_callback(_consume)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or not current.cancelling()):
                raise SandboxUnavailable(
                    "the gondolin runner was closed while the VM booted"
                ) from None
            raise

    async def _start(self) -> Bridge:
        await self._discard()  # what a dead bridge left: its process group, its TMPDIR
        if self._needs is None:
            self._needs = await asyncio.to_thread(prerequisites.check, self.config.gondolin)
        needs = self._needs
        if self._accel is None:
            self._accel = await self._probe_kvm(needs)
        bridge = await self._boot(needs, self._accel, self.config.gondolin.boot_timeout)
        atexit.register(self._kill_at_exit)
        return bridge

    async def _probe_kvm(self, needs: prerequisites.Prerequisites) -> str:
        """``"kvm"`` when a KVM boot succeeds quickly, else ``"tcg"``."""
        if not os.access("/dev/kvm", os.R_OK | os.W_OK):
            return "tcg"
        try:
            self._bridge = await self._boot(needs, "kvm", _KVM_PROBE_TIMEOUT)
        except SandboxUnavailable:
            await self._discard()
            return "tcg"
        await self._discard()
        return "kvm"

    def _private_tmp(self) -> Path:
        """A fresh TMPDIR under ``state_dir``, or under the system temp folder when that path
        would make Gondolin's socket paths too long.
        """
        self.state_dir.mkdir(parents=True, exist_ok=True)
        parent = self.state_dir if len(str(self.state_dir)) < _MAX_TMPDIR else None
        return Path(tempfile.mkdtemp(prefix="kc-gondolin-", dir=parent))

    async def _boot(self, needs: prerequisites.Prerequisites, accel: str, timeout: float) -> Bridge:
        self._tmp = self._private_tmp()
        env = {
            **os.environ,
            "TMPDIR": str(self._tmp),
            "GONDOLIN_SESSIONS_DIR": str(self._tmp / "sessions"),
        }
        root = prerequisites.module_root(needs.package_dir)
        bridge = await Bridge.launch(needs.node, needs.package_dir, root, env)
        self._bridge = bridge
        fields: dict[str, object] = {
            "workspace": str(self.host_root),
            "accel": accel,
            "imagePath": str(needs.guest_dir) if needs.guest_dir else None,
            "memory": self.config.gondolin.memory,
            "cpus": self.config.gondolin.cpus,
            "net": {
                "enabled": self.config.network,
                "allowedHosts": list(self.config.gondolin.allowed_hosts),
            },
            "bootTimeoutMs": int(timeout * 1000),
        }
        try:
            ready = await asyncio.wait_for(bridge.request("start", **fields), timeout + 10)
        except (BridgeError, TimeoutError) as error:
            detail = error.message if isinstance(error, BridgeError) else "timed out"
            await self._discard()
            raise self._boot_error(detail, needs) from error
        self._shell = ready.text("shell") or "/bin/sh"
        boot_ms = ready.number("bootMs")
        self.boot_seconds = boot_ms / 1000 if boot_ms is not None else None
        return bridge

    def _boot_error(self, detail: str, needs: prerequisites.Prerequisites) -> SandboxUnavailable:
        if needs.guest_dir is None and ("registry" in detail or "fetch" in detail):
            return prerequisites.guest_missing_message(detail)
        return SandboxUnavailable(
            f"the gondolin VM did not start ({self._accel or 'auto'}): {detail}",
            'with KVM broken or absent set sandbox.gondolin.accel to "tcg"; '
            "GONDOLIN_DEBUG=1 shows QEMU's own messages",
        )

    async def _discard(self) -> None:
        """Stop the current bridge (if any) and delete its temporary folder."""
        bridge, self._bridge = self._bridge, None
        if bridge is not None:
            await bridge.close(grace=2.0)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    async def close(self) -> None:
        """Close the VM and kill the bridge's process group; idempotent. A later ``exec``
        boots a new VM.
        """
        task, self._starting = self._starting, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, SandboxUnavailable, BridgeError):
                await task
        await self._discard()
        atexit.unregister(self._kill_at_exit)

    def _kill_at_exit(self) -> None:
        """Interpreter exit without ``close``: no event loop left, so kill and delete."""
        if self._bridge is not None:
            self._bridge.kill()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

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
        """Run ``argv`` in the VM; see :meth:`knightcode_builtins.gondolin.runner.Runner.exec`."""
        if signal is not None and signal.aborted:
            return ExecResult(None, aborted=True)
        if not argv:
            raise ValueError("exec() needs a program")
        try:  # the boot does not count against the command's timeout, but an abort stops waiting
            async with (signal or AbortSignal()).scope():
                bridge = await self._running()
        except Aborted:
            return ExecResult(None, aborted=True)
        collected: list[bytes] = []
        errors: list[bytes] = []
        out = on_output or collected.append

        def sink(stream: str, data: bytes) -> None:
            (out if merge_stderr or stream == "stdout" else errors.append)(data)

        try:
            ident = bridge.send("exec", exec_fields(argv, cwd, env, stdin), sink)
        except BridgeError as error:
            raise SandboxUnavailable(error.message) from error
        exited = bridge.answer(ident)
        timed_out = aborted = False
        try:
            outcome = await (signal or AbortSignal()).outlast(exited, timeout)
            timed_out, aborted = outcome == "timed_out", outcome == "aborted"
            if aborted or timed_out:
                grace = self.abort_grace if aborted else self.kill_grace
                await self._kill(bridge, ident, exited, grace)
        except BridgeError as error:
            raise SandboxUnavailable(f"the gondolin VM went away: {error.message}") from error
        finally:
            if not exited.done() and bridge.alive:
                # Cancelled (a tool timeout, shutdown): no time for a grace period, but the
                # request goes out now and the bridge KILLs the group on its own.
                with contextlib.suppress(BridgeError):
                    bridge.send("kill", {"target": ident, "grace": 0})
                exited.add_done_callback(_consume)
        return self._result(exited.result(), argv, cwd, collected, errors, timed_out, aborted)

    async def _kill(
        self, bridge: Bridge, ident: int, exited: asyncio.Future[Event], grace: float
    ) -> None:
        """TERM the command's group, KILL it after ``grace``, and wait for its end; a VM that
        does not manage that in time is killed whole (the next exec boots a new one).
        """
        killed = bridge.answer(bridge.send("kill", {"target": ident, "grace": grace}))
        try:
            await asyncio.wait_for(asyncio.gather(killed, asyncio.shield(exited)), _KILL_DEADLINE)
        except TimeoutError:
            bridge.kill()
            with contextlib.suppress(BridgeError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(exited), 5.0)
            if not exited.done():
                exited.cancel()
            raise SandboxUnavailable("the gondolin VM did not stop a killed command") from None

    @staticmethod
    def _result(
        event: Event,
        argv: Sequence[str],
        cwd: str,
        collected: list[bytes],
        errors: list[bytes],
        timed_out: bool,
        aborted: bool,
    ) -> ExecResult:
        missing = event.text("missing")
        if missing is not None and not (timed_out or aborted):
            what = cwd if missing == "cwd" else argv[0]
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), what)
        return ExecResult(
            event.number("code"), b"".join(collected), timed_out, aborted, b"".join(errors)
        )


def _consume(future: asyncio.Future[Event] | asyncio.Future[Bridge]) -> None:
    """Retrieve the outcome of a future nobody may await (no 'never retrieved' warning)."""
    if not future.cancelled():
        future.exception()


if TYPE_CHECKING:
    from knightcode_builtins.gondolin.runner import Runner

    _IS_A_RUNNER: type[Runner] = GondolinRunner
