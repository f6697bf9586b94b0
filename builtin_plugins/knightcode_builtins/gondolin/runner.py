"""The ``Runner`` protocol: one isolation mechanism (bwrap, a container, a Gondolin micro-VM).

A runner only runs processes inside its boundary. Everything else — mapping agent paths
(``/workspace/…``) to the host, serving files under the mount from the host side, the
environment policy, the default shell — is done once for every runner by
:class:`~knightcode_builtins.gondolin.backend.SandboxBackend`, which is what the tools see.

Contract (tested for every runner by ``tests/sandbox/test_contract.py``):

* ``exec`` runs ``argv`` inside the boundary, with ``cwd`` a path *inside* (``/workspace/src``)
  and ``env`` the complete environment (nothing of the host's leaks in on top of it).
* Output arrives in chunks as it is produced (``on_output``), or is collected into the result.
* A timeout, an abort (``signal``) or cancellation of the awaiting task kills the *whole process
  tree inside* (TERM, a short grace, then KILL) — never just the waiting side — and the result
  says ``timed_out``/``aborted``.
* ``start`` is idempotent and lazy-safe: ``exec`` starts the runner when needed, and starts it
  again when what it started has died (a crashed container, a killed VM bridge).
* ``close`` is idempotent and leaves no process, container, VM or temporary file behind.
* Several ``exec`` calls may run at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from knightcode import AbortSignal, ExecResult, HostCommand, OutputCallback

__all__ = ["PipedRunner", "Runner", "SandboxUnavailable"]


class SandboxUnavailable(Exception):
    """The sandbox cannot run here: a program, image or permission is missing.

    :param message: what is wrong, in one sentence (``"bwrap is not installed"``)
    :param hint: how to fix it (``"apt-get install bubblewrap"``), shown on its own line
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  {self.hint}" if self.hint else self.message


class Runner(Protocol):
    """Runs processes inside one isolation boundary; see the module docstring."""

    name: str
    """The backend's settings name: ``"bwrap"``, ``"container"``, ``"gondolin"``."""

    def describe(self) -> str:
        """One short line for the status bar and ``sandbox doctor`` (``"bwrap"``,
        ``"podman container kc-3f2a…"``, ``"gondolin micro-VM (tcg)"``).
        """
        ...

    def base_environment(self) -> Mapping[str, str]:
        """The guest's own variables (``PATH``, ``HOME``, ``TMPDIR`` …) that the environment
        policy starts from; host values of these never reach the guest.
        """
        ...

    def shell(self) -> str:
        """The absolute path of the shell inside (``/bin/bash`` if present, else ``/bin/sh``)."""
        ...

    async def start(self) -> None:
        """Make the boundary ready (pull nothing silently; a missing piece raises).

        :raises SandboxUnavailable: with a hint saying how to get what is missing
        """
        ...

    async def close(self) -> None:
        """Stop everything this runner started; idempotent."""
        ...

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
        """Run ``argv`` inside and wait; the semantics of
        :meth:`knightcode.ExecutionBackend.exec` (PATH lookup of ``argv[0]`` inside), plus
        ``stdin`` (bytes fed to the process, then end of file; None: an empty stdin).

        :raises OSError: the program could not be started inside (``ENOENT`` for a missing
            program or cwd)
        :raises SandboxUnavailable: the boundary could not be (re)started
        """
        ...


@runtime_checkable
class PipedRunner(Protocol):
    """An optional runner method: the host command line of a process inside, which the caller
    spawns with live pipes (an MCP stdio server; see :class:`knightcode.HostCommands`).
    bwrap has it (each command is a host process anyway), and the container runner
    (``<cli> exec -i``).
    """

    def host_command(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], scrub: Sequence[str] = ()
    ) -> HostCommand:
        """``argv`` inside, ``cwd`` a path inside, ``env`` the complete environment inside;
        ``scrub``: names the spawner adds on its own, kept out unless ``env`` sets them.

        :raises OSError: not started yet, or the program or working directory is missing
        """
        ...
