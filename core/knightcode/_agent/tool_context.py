"""The ``ctx`` a tool's ``execute`` receives: where it runs, how to stop, and the plugin context."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knightcode._plugins.context import ExtensionContext
    from knightcode._tools.backend import ExecutionBackend


class ToolCallContext:
    """Attributes of :class:`knightcode._tools.ToolContextLike` for the built-in tools, plus
    everything of the plugin's :class:`~knightcode._plugins.context.ExtensionContext` (``ui``,
    ``settings`` …) for plugin tools.

    :param tool_call_id: the call being executed
    """

    def __init__(
        self,
        *,
        cwd: Path,
        backend: ExecutionBackend,
        signal: asyncio.Event,
        shell_path: str | None,
        shell_command_prefix: str | None,
        agent_dir: Path | None,
        tool_call_id: str,
        extension: ExtensionContext | None,
    ) -> None:
        self.cwd = cwd
        self.backend = backend
        self.signal = signal
        self.shell_path = shell_path
        self.shell_command_prefix = shell_command_prefix
        self.agent_dir = agent_dir
        self.tool_call_id = tool_call_id
        self._extension = extension

    def __getattr__(self, name: str) -> Any:
        extension = self.__dict__.get("_extension")
        if extension is None:
            raise AttributeError(name)
        return getattr(extension, name)
