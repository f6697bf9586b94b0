"""Where a stdio server runs: through the session's execution backend, or on this machine.

The issue's rule is that MCP tools "run through the execution backend where they are
commands": under a sandbox (builtin:gondolin) a stdio server's command runs inside it, with the
workspace at ``/workspace``, the sandbox's network policy and environment policy, plus the
server's own ``env`` from mcp.json. A backend offers that through
:class:`knightcode.HostCommands` (the host command line that starts the process inside, which
the SDK then spawns with its pipes); a sandbox that cannot (the micro-VM runner today) fails
the server with a message naming the opt-out, never falling back to the host.

The backend is only known once the session starts, while servers may be started earlier (the
tool listing while plugins register, eager servers): such a start waits for
:meth:`Placement.decide`, up to the server's timeout.
"""

from __future__ import annotations

import asyncio
import errno
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.client.stdio import StdioServerParameters

    from knightcode import ExecutionBackend

    from .config import ServerConfig

__all__ = ["Placement", "PlacementError"]


class PlacementError(Exception):
    """The server cannot run where its tools' backend is; the message says what to do."""


class Placement:
    """The session's execution backend as far as stdio servers are concerned.

    :param pending: a session will call :meth:`decide`; until then starts wait (False: no
        session, servers run on this machine — ``knightcode mcp list``)
    """

    def __init__(self, *, pending: bool) -> None:
        self._decided = threading.Event()
        self._backend: ExecutionBackend | None = None
        if not pending:
            self._decided.set()

    @property
    def sandboxed(self) -> bool:
        """Whether servers with ``sandbox`` on run through a backend other than this machine."""
        return self._decided.is_set() and self._backend is not None

    def decide(self, backend: ExecutionBackend | None) -> None:
        """The session's backend (None or the local backend: this machine)."""
        from knightcode import LocalBackend  # loaded by then (the module imports lazily)

        self._backend = None if backend is None or isinstance(backend, LocalBackend) else backend
        self._decided.set()

    async def _backend_for(
        self, cfg: ServerConfig, before_session: bool
    ) -> ExecutionBackend | None:
        if not cfg.sandbox:
            return None
        if not self._decided.is_set():
            if before_session:
                return None  # the listing while plugins register (see manager.py)
            decided = await asyncio.to_thread(self._decided.wait, cfg.timeout)
            if not decided:
                raise PlacementError("the session's execution backend was not ready in time")
        return self._backend

    async def parameters(
        self, cfg: ServerConfig, before_session: bool = False
    ) -> tuple[StdioServerParameters, bool]:
        """The SDK's spawn parameters for ``cfg``, and whether it runs on this machine only for
        want of a decision (to be stopped if the session is sandboxed).

        :raises PlacementError: the sandbox cannot run it, or no backend came in time
        """
        from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, StdioServerParameters

        from knightcode import HostCommands

        assert cfg.command is not None
        backend = await self._backend_for(cfg, before_session)
        if backend is None:
            params = StdioServerParameters(
                command=cfg.command, args=list(cfg.args), env=dict(cfg.env) or None, cwd=cfg.cwd
            )
            return params, cfg.sandbox and not self._decided.is_set()
        if not isinstance(backend, HostCommands):
            raise PlacementError(_unsupported(cfg, backend, "it has no way to run one"))
        try:
            command = backend.host_command(
                [cfg.command, *cfg.args],
                cwd=cfg.cwd,
                env=cfg.env,
                # The SDK adds these host variables to the spawned process on its own.
                scrub=DEFAULT_INHERITED_ENV_VARS,
            )
        except OSError as error:
            missing = (error.filename or cfg.command) if error.errno == errno.ENOENT else None
            why = error.strerror or str(error)
            raise PlacementError(_unsupported(cfg, backend, why, missing)) from None
        params = StdioServerParameters(
            command=command.argv[0], args=list(command.argv[1:]), env=dict(command.env)
        )
        return params, False


def _unsupported(
    cfg: ServerConfig, backend: ExecutionBackend, why: str, missing: str | None = None
) -> str:
    name = getattr(backend, "name", type(backend).__name__)
    opt_out = f"set \"sandbox\": false for '{cfg.name}' in {cfg.source} to run it on this machine"
    if missing is not None:
        return (
            f"cannot run '{cfg.command}' in the {name} sandbox: {missing} is not inside it; "
            f"bind its folder in (settings sandbox.{name}.roBinds) or {opt_out}"
        )
    return f"cannot run '{cfg.command}' in the {name} sandbox ({why}); {opt_out}"
