"""What a tool's ``execute`` receives besides its arguments: where it runs and how to stop."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from knightcode._tools.backend import ExecutionBackend

__all__ = ["ToolContext", "ToolContextLike"]


class ToolContextLike(Protocol):
    """The attributes the built-in tools read; the agent may pass any object that has them."""

    @property
    def cwd(self) -> Path | str: ...

    @property
    def backend(self) -> ExecutionBackend: ...

    @property
    def signal(self) -> asyncio.Event: ...

    @property
    def shell_path(self) -> str | None: ...

    @property
    def shell_command_prefix(self) -> str | None: ...

    @property
    def agent_dir(self) -> Path | None: ...


@dataclass
class ToolContext:
    """A plain :class:`ToolContextLike` for tests, scripts and the agent.

    :param cwd: the directory relative paths are resolved against and commands run in
    :param backend: all file and process access goes through it
    :param signal: set to abort the running tool ("Operation aborted")
    :param shell_path: settings ``shellPath``: the shell bash runs (default: the backend's)
    :param shell_command_prefix: settings ``shellCommandPrefix``: prepended to every bash command
        on its own line
    :param agent_dir: the agent directory; its ``bin/`` is put first on bash's PATH
    """

    cwd: Path
    backend: ExecutionBackend
    signal: asyncio.Event = field(default_factory=asyncio.Event)
    shell_path: str | None = None
    shell_command_prefix: str | None = None
    agent_dir: Path | None = None

    @classmethod
    def local(
        cls,
        cwd: str | os.PathLike[str],
        *,
        shell_path: str | None = None,
        shell_command_prefix: str | None = None,
        agent_dir: Path | None = None,
    ) -> ToolContext:
        """A context on a :class:`~knightcode._tools.local_backend.LocalBackend` at ``cwd``."""
        # Imported here: the context module stays free of process machinery for sandbox users.
        from knightcode._tools.local_backend import LocalBackend

        path = Path(cwd)
        return cls(
            path,
            LocalBackend(path),
            shell_path=shell_path,
            shell_command_prefix=shell_command_prefix,
            agent_dir=agent_dir,
        )
