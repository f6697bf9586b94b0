"""What a tool's ``execute`` receives besides its arguments: where it runs, how to stop, and the
plugin context.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._abort import AbortSignal
from knightcode._plugins.context import ExtensionUI, HeadlessUI

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from knightcode._plugins.context import HookContext
    from knightcode._plugins.definitions import ToolDefinition
    from knightcode._tools.backend import ExecResult, ExecutionBackend, OutputCallback
    from knightcode._tools.nested import NestedResult, ToolCaller

__all__ = ["ToolContext"]


@dataclass(frozen=True)
class ToolContext:
    """The ``ctx`` of ``execute(tool_call_id, args, ctx, on_update)``.

    :param cwd: the directory relative paths resolve against and commands run in
    :param backend: every file and process access goes through it
    :param signal: aborts the call ("Operation aborted"); wait inside ``signal.scope()``
    :param shell_path: settings ``shellPath``: the shell ``bash`` runs (None: the backend's)
    :param shell_command_prefix: settings ``shellCommandPrefix``: prepended to every ``bash``
        command on its own line
    :param auto_resize_images: settings ``images.autoResize``: ``read`` shrinks images to the
        providers' limits (2000x2000, 4.5 MB) instead of sending them as they are
    :param agent_dir: the agent directory; its ``bin/`` is put first on ``bash``'s PATH
    :param tool_call_id: the call being executed
    :param context: the plugin context (``ui``, ``settings``, ``agent`` …) while a session runs
    :param caller: runs nested tool calls (:meth:`call_tool`); set by the turn loop
    """

    cwd: Path
    backend: ExecutionBackend
    signal: AbortSignal = field(default_factory=AbortSignal)
    shell_path: str | None = None
    shell_command_prefix: str | None = None
    auto_resize_images: bool = True
    agent_dir: Path | None = None
    tool_call_id: str = ""
    context: HookContext | None = None
    caller: ToolCaller | None = None

    @property
    def ui(self) -> ExtensionUI:
        """The plugin UI (a headless one without a plugin context)."""
        return self.context.ui if self.context is not None else HeadlessUI()

    @property
    def has_ui(self) -> bool:
        """Whether someone can answer dialogs."""
        return self.context is not None and self.context.has_ui

    # --- nested tool calls ---

    async def call_tool(self, name: str, args: Mapping[str, object]) -> NestedResult:
        """Run another tool through the whole pipeline and return its result.

        The tool is looked up among the session's available tools (active or not), ``args``
        are validated against its parameters, the ``tool_call`` hook may block it (an error
        result carrying the reason) and the ``tool_result`` hook may patch its result. It runs
        with this call's backend and abort signal. The event stream shows it as a tool
        execution with ``parentToolCallId`` set to this call's id; it gets no ``toolResult``
        message (this call's own result is the one recorded).

        :returns: the result; a failed call is a result with ``is_error``, never an exception
        :raises RuntimeError: no session runs this call (a context built by hand)
        """
        if self.caller is None:
            raise RuntimeError(
                "call_tool needs the agent loop: this ToolContext was not made for a running "
                "session's tool call"
            )
        return await self.caller.call(name, dict(args))

    def callable_tools(self) -> Mapping[str, ToolDefinition]:
        """The tools :meth:`call_tool` can run, by name (empty outside the agent loop)."""
        return self.caller.tools if self.caller is not None else {}

    # --- helpers for plugin tools: everything through the backend, so a sandbox holds ---

    def resolve(self, path: str) -> str:
        """``path`` as the backend names it: ``~`` expanded, relative paths against ``cwd``."""
        from knightcode._tools.path_utils import resolve_to_cwd

        return resolve_to_cwd(path, self.cwd, self.backend.home())

    async def read_bytes(self, path: str) -> bytes:
        """The file at ``path`` (relative to ``cwd``), read through the backend."""
        return await self.signal.guard(self.backend.read_file(self.resolve(path)))

    async def read_text(self, path: str, encoding: str = "utf-8") -> str:
        """The file at ``path`` as text (undecodable bytes replaced)."""
        return (await self.read_bytes(path)).decode(encoding, "replace")

    async def write_bytes(self, path: str, data: bytes) -> None:
        """Create or replace the file at ``path`` through the backend (parents created)."""
        await self.signal.guard(self.backend.write_file(self.resolve(path), data))

    async def write_text(self, path: str, text: str, encoding: str = "utf-8") -> None:
        """Create or replace the file at ``path`` with ``text``."""
        await self.write_bytes(path, text.encode(encoding))

    async def run(
        self,
        command: str | Sequence[str],
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        on_output: OutputCallback | None = None,
        merge_stderr: bool = True,
    ) -> ExecResult:
        """Run ``command`` through the backend — inside the sandbox when one is on — in
        ``cwd``, stopped by this call's abort signal.

        :param command: a shell command line (run by the backend's shell) or an argv list
        :param env: the complete environment (default: the backend's); under a sandbox, host
            values the policy keeps out are removed from it
        """
        if isinstance(command, str):
            return await self.backend.exec(
                shell_command=command,
                cwd=str(self.cwd),
                env=env,
                timeout=timeout,
                signal=self.signal,
                on_output=on_output,
                merge_stderr=merge_stderr,
            )
        return await self.backend.exec(
            list(command),
            cwd=str(self.cwd),
            env=env,
            timeout=timeout,
            signal=self.signal,
            on_output=on_output,
            merge_stderr=merge_stderr,
        )

    @classmethod
    def local(
        cls,
        cwd: str | os.PathLike[str],
        *,
        signal: AbortSignal | None = None,
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
            signal if signal is not None else AbortSignal(),
            shell_path=shell_path,
            shell_command_prefix=shell_command_prefix,
            agent_dir=agent_dir,
        )
