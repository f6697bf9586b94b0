"""The ``code`` tool: run a Python script whose functions are the session's tools.

One ``code`` call replaces a round trip per tool: the script reads, searches, runs commands,
fetches and classifies, and only what it prints comes back. It runs as ``python3`` through the
execution backend (inside the sandbox when one is on, with the trust of ``bash``), with a
timeout and an output limit from tools.json ``codemode``; its tool calls are nested calls of
this one (``ctx.call_tool``), so every hook sees them and the event stream shows them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..definitions import CODE_DESCRIPTION, CODE_PARAMETERS, code_definition

if TYPE_CHECKING:
    from collections.abc import Callable

    from knightcode import ExecResult, ToolContext, ToolDefinition, ToolResult

    from ..config import CodemodeConfig
    from .output import BoundedOutput
    from .serve import CallRecord

__all__ = ["code_tool"]

RUNTIME = Path(__file__).with_name("runtime.py")

DESCRIPTION = CODE_DESCRIPTION
PARAMETERS = CODE_PARAMETERS


class ScriptFailed(Exception):
    """The script failed (an exception, a non-zero exit, the timeout): its output is the
    message the model gets, ``details`` the record.
    """

    def __init__(self, message: str, details: dict[str, object]) -> None:
        super().__init__(message)
        self.details = details


def _progress(on_update: Callable[[ToolResult], object]) -> Callable[[list[CallRecord]], None]:
    """Reports the script's calls so far as a partial result (the UI shows it live)."""

    def report(records: list[CallRecord]) -> None:
        text = "\n".join(record.mark() for record in records)
        on_update(
            {
                "content": [{"type": "text", "text": text}],
                "details": {"calls": [record.to_json() for record in records]},
            }
        )

    return report


def _summary(result: ExecResult, records: list[CallRecord]) -> str:
    status = "killed" if result.exit_code is None else f"exit status {result.exit_code}"
    if not records:
        return f"[{status} · no tool calls]"
    calls = ", ".join(record.name if record.ok else f"{record.name} (failed)" for record in records)
    return f"[{status} · {len(records)} call{'s' if len(records) != 1 else ''}: {calls}]"


async def _run_script(
    ctx: ToolContext,
    script: str,
    config: CodemodeConfig,
    timeout: float,
    on_update: Callable[[ToolResult], object],
) -> ToolResult:
    from .channel import Channel, ChannelError
    from .enable import callable_tools
    from .functions import function_spec
    from .output import BoundedOutput
    from .serve import Dispatcher, serve

    python = await ctx.backend.find_executable(config.python)
    if python is None:
        raise ScriptFailed(
            f"codemode: {config.python!r} was not found where the tools run (the sandbox, when "
            "one is on); install Python 3 there or set tools.json codemode.python",
            {},
        )
    tools = callable_tools(ctx)
    specs = [function_spec(name, tool.description, tool.parameters) for name, tool in tools.items()]
    channel = Channel.create(ctx)
    try:
        channel.write("runtime.py", RUNTIME.read_bytes())
        channel.write("script.py", script.encode("utf-8"))
        channel.write("functions.json", json.dumps([spec.to_json() for spec in specs]).encode())
        if not await ctx.backend.exists(channel.agent_path("script.py")):
            raise ChannelError(
                f"codemode: the execution backend cannot see {channel.host_dir}, so a script "
                "cannot reach the tools (it needs the local backend or a sandbox that mounts "
                "the workspace)"
            )
        output = BoundedOutput(config.max_output_chars)
        dispatcher = Dispatcher(ctx, tools, _progress(on_update))
        stop = asyncio.Event()
        server = asyncio.ensure_future(serve(channel, dispatcher, stop))
        try:
            result = await ctx.run(
                [python, "-u", "-B", channel.agent_path("runtime.py"), channel.agent_dir],
                timeout=timeout,
                on_output=output.feed,
            )
        finally:
            # The flag ends the loop even when a nested call swallows the cancellation (an
            # asyncio.wait_for racing its own timeout can, on Python 3.11).
            stop.set()
            server.cancel()
            await asyncio.wait([server])  # an in-flight nested call ends (cancelled) first
            failure = None if server.cancelled() else server.exception()
        if failure is not None:  # a bug of ours: say so rather than hang or hide it
            raise ScriptFailed(f"codemode: answering the script failed: {failure!r}", {})
    finally:
        channel.close()
    return _outcome(result, output, dispatcher.records, timeout)


def _outcome(
    result: ExecResult, output: BoundedOutput, records: list[CallRecord], timeout: float
) -> ToolResult:
    text = output.text().rstrip("\n") or "(no output)"
    details: dict[str, object] = {
        "exitCode": result.exit_code,
        "timedOut": result.timed_out,
        "outputChars": output.total,
        "truncated": output.truncated,
        "calls": [record.to_json() for record in records],
    }
    summary = _summary(result, records)
    if result.aborted:
        raise ScriptFailed(f"{text}\n\n[aborted] {summary}", details)
    if result.timed_out:
        raise ScriptFailed(
            f"{text}\n\n[killed after {timeout:g} s: the script ran longer than its timeout; "
            f"pass a larger `timeout` or do less per script] {summary}",
            details,
        )
    if result.exit_code != 0:
        raise ScriptFailed(f"{text}\n\n{summary}", details)
    return {"content": [{"type": "text", "text": f"{text}\n\n{summary}"}], "details": details}


async def run_code(
    tool_call_id: str,
    args: dict[str, object],
    ctx: ToolContext,
    on_update: Callable[[ToolResult], object],
) -> ToolResult:
    """The ``code`` tool's work for one call (``definitions.code_definition``)."""
    from ..settings import tools_config_for

    script = args.get("script")
    if not isinstance(script, str) or not script.strip():
        raise ScriptFailed("code: `script` is empty; pass Python source to run", {})
    config = tools_config_for(ctx).codemode
    timeout = args.get("timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        timeout = config.timeout
    return await _run_script(ctx, script, config, float(timeout), on_update)


def code_tool() -> ToolDefinition:
    """The ``code`` tool's definition (modules load on its first call)."""
    return code_definition()
