"""The ``bash`` tool: run a command, stream its output, keep the tail, spill the rest to a file."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TypedDict

from knightcode._plugins.definitions import ToolDefinition
from knightcode._tools.context import ToolContext
from knightcode._tools.errors import ToolError
from knightcode._tools.output_buffer import OutputBuffer, OutputSnapshot
from knightcode._tools.results import (
    OnUpdate,
    ToolResult,
    call_update,
    errno_code,
    js_number,
    schedule_update,
    text_result,
)
from knightcode._tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationDetails,
    format_size,
)

__all__ = ["UPDATE_INTERVAL", "create_bash_tool", "shell_environment"]

UPDATE_INTERVAL = 0.1
"""Seconds between partial-output updates, so a chatty command does not flood the event stream."""

BASH_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The bash command line to run"},
        "timeout": {
            "type": "number",
            "description": "Seconds after which the command is killed (default: no timeout)",
        },
    },
    "required": ["command"],
}


class BashDetails(TypedDict, total=False):
    """``details`` of a bash result whose output was truncated (or of a partial result)."""

    truncation: TruncationDetails
    fullOutputPath: str | None
    """The temporary file holding the whole output."""


def shell_environment(
    base: Mapping[str, str], agent_dir: Path | str | None, backend: object = None
) -> dict[str, str]:
    """``base`` with ``<agent_dir>/bin`` put first on PATH (once), where knightcode keeps tools.

    Not under a backend that names paths its own way (a sandbox): the agent directory is a host
    folder the sandbox does not have, and its name is nothing the sandbox needs to know.
    """
    from knightcode._tools.backend import MappedBackend

    env = dict(base)
    if agent_dir is None or isinstance(backend, MappedBackend):
        return env
    bin_dir = os.path.join(os.fspath(agent_dir), "bin")
    key = next((name for name in env if name.lower() == "path"), "PATH")
    current = env.get(key, "")
    if bin_dir not in [entry for entry in current.split(os.pathsep) if entry]:
        env[key] = os.pathsep.join(part for part in (bin_dir, current) if part)
    return env


class _ThrottledUpdates:
    """Partial results at most every :data:`UPDATE_INTERVAL`: the first chunk after a quiet
    period goes out at once, later ones are folded into one trailing update.
    """

    def __init__(self, on_update: OnUpdate, output: OutputBuffer) -> None:
        self._on_update = on_update
        self._output = output
        self._dirty = False
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self.pending: set[Awaitable[object]] = set()

    def data_arrived(self) -> None:
        if self._on_update is None:
            return
        self._dirty = True
        delay = UPDATE_INTERVAL - (time.monotonic() - self._last)
        if delay <= 0:
            self.cancel()
            self.emit()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.emit()

    def emit(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        self._last = time.monotonic()
        snapshot = self._output.snapshot(persist_if_truncated=True)
        details: BashDetails = {}
        if snapshot.truncation.truncated:
            details["truncation"] = snapshot.truncation.to_details()
        if snapshot.full_output_path:
            details["fullOutputPath"] = snapshot.full_output_path
        schedule_update(self._on_update, text_result(snapshot.content, details), self.pending)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _where(path: str | None, output: OutputBuffer) -> str:
    """The notice's pointer to the spill file: ``Full output: PATH``, and what it lacks."""
    if path is None:
        return f"Full output not saved: {output.spill_error}"
    if output.spill_error:
        return f"Full output: {path} (incomplete: {output.spill_error})"
    if output.spill_dropped:  # the spill file's cap: its head and tail only
        return f"Full output: {path} (its middle {format_size(output.spill_dropped)} left out)"
    return f"Full output: {path}"


def _format(
    snapshot: OutputSnapshot, output: OutputBuffer, empty: str
) -> tuple[str, BashDetails | None]:
    """The text the model sees, with the reference's truncation notice, and the details."""
    truncation = snapshot.truncation
    last_line_bytes = output.last_line_bytes
    text = snapshot.content or empty
    if not truncation.truncated:
        return text, None
    where = _where(snapshot.full_output_path, output)
    end = truncation.total_lines
    start = end - truncation.output_lines + 1
    if truncation.last_line_partial:
        text += (
            f"\n\n[Showing last {format_size(truncation.output_bytes)} of line {end} "
            f"(line is {format_size(last_line_bytes)}). {where}]"
        )
    elif truncation.truncated_by == "lines":
        text += f"\n\n[Showing lines {start}-{end} of {end}. {where}]"
    else:
        text += (
            f"\n\n[Showing lines {start}-{end} of {end} ({format_size(DEFAULT_MAX_BYTES)} "
            f"limit). {where}]"
        )
    details: BashDetails = {
        "truncation": truncation.to_details(),
        "fullOutputPath": snapshot.full_output_path,
    }
    return text, details


def _with_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


async def execute_bash(
    tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate = None
) -> ToolResult:
    """Run the bash tool (see :func:`create_bash_tool`)."""
    command = str(args["command"])
    timeout = args.get("timeout")
    backend = ctx.backend
    if ctx.shell_command_prefix:
        command = f"{ctx.shell_command_prefix}\n{command}"
    if ctx.shell_path and not await backend.exists(ctx.shell_path):
        raise ToolError(f"Custom shell path not found: {ctx.shell_path}")
    cwd = os.fspath(ctx.cwd)
    info = await backend.stat(cwd)
    if info is None or not info.is_dir:
        raise ToolError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")
    env = shell_environment(backend.environment(), ctx.agent_dir, backend)
    limit: float | None = None
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        limit = float(timeout)
    output = OutputBuffer(DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES, temp_file_prefix="knightcode-bash")
    updates = _ThrottledUpdates(on_update, output)
    await call_update(on_update, {"content": [], "details": None})

    def on_output(chunk: bytes) -> None:
        output.append(chunk)
        updates.data_arrived()

    async def finish() -> OutputSnapshot:
        output.finish()
        updates.cancel()
        updates.emit()
        snapshot = output.snapshot(persist_if_truncated=True)
        output.close()
        if updates.pending:
            await asyncio.gather(*updates.pending)
        return snapshot

    argv = [ctx.shell_path, "-c", command] if ctx.shell_path else None
    try:
        try:
            result = await backend.exec(
                argv,
                shell_command=None if argv else command,
                cwd=cwd,
                env=env,
                timeout=limit,
                signal=ctx.signal,
                on_output=on_output,
            )
        except OSError as error:
            await finish()
            program = ctx.shell_path or error.filename or "bash"
            raise ToolError(f"spawn {program} {errno_code(error)}") from error
        snapshot = await finish()
    finally:
        updates.cancel()
        output.close()
    # A failed result names the spill file too (details as well as text): its output is there.
    empty = "" if result.aborted or result.timed_out else "(no output)"
    text, details = _format(snapshot, output, empty)
    if result.aborted:
        raise ToolError(_with_status(text, "Command aborted"), details)
    if result.timed_out:
        status = f"Command timed out after {js_number(timeout)} seconds"
        raise ToolError(_with_status(text, status), details)
    if result.exit_code not in (0, None):
        raise ToolError(_with_status(text, f"Command exited with code {result.exit_code}"), details)
    return text_result(text, details)


def create_bash_tool() -> ToolDefinition:
    """The ``bash`` tool definition."""
    return ToolDefinition(
        name="bash",
        label="bash",
        description=(
            "Run a bash command in the working directory and return its combined stdout and "
            f"stderr. Only the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB "
            "of output are returned (whichever limit is hit first); longer output is saved in full "
            "to a temporary file whose path is given. A timeout in seconds is optional."
        ),
        parameters=BASH_PARAMETERS,
        execute=execute_bash,
        prompt_snippet="Run bash commands (tests, builds, git, file management)",
    )
