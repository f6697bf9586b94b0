"""Building the sandbox backend a session asked for (settings ``sandbox`` / ``--sandbox``).

Nothing here may fail open: a wrong setting, a missing program or an import error gives a
:class:`RefusedBackend`, whose ``prepare`` refuses the session, never ``None`` (which would let
the kernel run the tools on the host).
"""

from __future__ import annotations

import errno
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode import DirEntry, ExecResult, FileInfo

if TYPE_CHECKING:
    from knightcode import AbortSignal, HookContext, OutputCallback
    from knightcode_builtins.gondolin.backend import SandboxBackend
    from knightcode_builtins.gondolin.config import SandboxConfig
    from knightcode_builtins.gondolin.runner import Runner

__all__ = ["RefusedBackend", "backend_for", "build_backend", "config_for"]


class RefusedBackend:
    """Stands in for a sandbox that could not be built: refuses the session and every call."""

    name = "refused"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def _refuse(self) -> OSError:
        return OSError(errno.EPERM, f"the sandbox is not available: {self.reason}")

    async def prepare(self) -> None:
        """Refuse the session."""
        raise self._refuse()

    async def aclose(self) -> None:
        """Nothing was started."""

    async def read_file(self, path: str) -> bytes:
        """Refused."""
        raise self._refuse()

    async def write_file(self, path: str, data: bytes) -> None:
        """Refused."""
        raise self._refuse()

    async def stat(self, path: str) -> FileInfo | None:
        """Refused."""
        raise self._refuse()

    async def exists(self, path: str) -> bool:
        """Refused."""
        raise self._refuse()

    async def list_dir(self, path: str) -> list[DirEntry]:
        """Refused."""
        raise self._refuse()

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
        """Refused."""
        raise self._refuse()

    async def find_executable(self, name: str) -> str | None:
        """Nothing can run."""
        return None

    def environment(self) -> Mapping[str, str]:
        """Empty."""
        return {}

    def home(self) -> str:
        """Nowhere."""
        return "/"


def config_for(settings_value: object, flag: object) -> SandboxConfig:
    """The sandbox settings with the ``--sandbox`` flag applied.

    :raises SandboxSettingsError: a wrong value (the message names the key)
    """
    from knightcode_builtins.gondolin.config import parse_config

    return parse_config(settings_value, flag if isinstance(flag, str) and flag else None)


def _runner(config: SandboxConfig, host_root: Path, state_dir: Path) -> Runner:
    if config.backend == "bwrap":
        from knightcode_builtins.gondolin.bwrap import BwrapRunner

        return BwrapRunner(host_root, config, state_dir=state_dir)
    if config.backend == "container":
        from knightcode_builtins.gondolin.container import ContainerRunner

        return ContainerRunner(
            host_root, config, session_id=uuid.uuid4().hex[:12], state_dir=state_dir
        )
    if config.backend == "gondolin":
        from knightcode_builtins.gondolin.vm import GondolinRunner

        return GondolinRunner(host_root, config, state_dir=state_dir)
    raise ValueError(f"no runner for backend {config.backend!r}")


def build_backend(config: SandboxConfig, cwd: Path, agent_dir: Path | None) -> SandboxBackend:
    """A (not yet started) sandbox backend over ``cwd`` for ``config``."""
    from knightcode_builtins.gondolin.backend import SandboxBackend

    state_dir = Path(tempfile.mkdtemp(prefix=f"knightcode-{config.backend}-"))
    return SandboxBackend(
        _runner(config, cwd, state_dir),
        cwd,
        config,
        agent_dir=agent_dir,
        state_dir=state_dir,
    )


def backend_for(ctx: HookContext) -> SandboxBackend | RefusedBackend | None:
    """The ``execution_backend`` hook: None for ``local``, else the sandbox (or a refusal)."""
    try:
        config = config_for(ctx.settings.get("sandbox"), ctx.flags.get("sandbox"))
    except ValueError as error:
        return RefusedBackend(str(error))
    if not config.isolated:
        return None
    try:
        return build_backend(config, ctx.cwd, ctx.agent_dir)
    except Exception as error:  # an import or set-up failure must not fall back to the host
        return RefusedBackend(f"{config.backend}: {error}")
