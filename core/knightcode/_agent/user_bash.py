"""Commands the user runs with ``!`` (``!!`` keeps the output out of the model's context).

The command runs through the session's execution backend — or a ``user_bash`` plugin answers it,
or names another backend — in settings ``shellPath`` (else the backend's shell) after settings
``shellCommandPrefix``, and becomes a ``bashExecution`` message, recorded once the agent is
idle so it never lands between an assistant's tool calls and their results.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from knightcode._agent.session_ops import SessionOperationError
from knightcode._plugins.results import BashAnswer, RunInBackend

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal
    from knightcode._agent.session import AgentSession
    from knightcode._types.messages import BashExecutionMessage

__all__ = ["record_bash_execution", "run_user_bash"]


async def run_user_bash(
    agent: AgentSession,
    command: str,
    *,
    exclude_from_context: bool = False,
    signal: AbortSignal | None = None,
    on_chunk: Callable[[str], None] | None = None,
) -> BashExecutionMessage:
    """Run ``command`` and return its ``bashExecution`` message, not yet recorded (see
    :func:`record_bash_execution`).

    Output streams to ``on_chunk`` as text; the message keeps the tail (the bash tool's limits)
    and names the spill file when the output was truncated. Setting ``signal`` kills the
    process group.

    :raises SessionOperationError: the shell could not be started
    """
    from knightcode._tools.bash import shell_environment
    from knightcode._tools.output_buffer import OutputBuffer

    hooks = agent.hooks
    verdict = (
        await hooks.user_bash(
            command=command, exclude_from_context=exclude_from_context, cwd=agent.cwd
        )
        if hooks is not None
        else None
    )
    if isinstance(verdict, BashAnswer):
        return _message(
            command,
            verdict.output,
            verdict.exit_code,
            verdict.cancelled,
            verdict.truncated,
            verdict.full_output_path,
            exclude_from_context,
        )
    backend = verdict.backend if isinstance(verdict, RunInBackend) else agent.options.backend
    options = agent.options
    # Settings shellPath and shellCommandPrefix, as for the bash tool; the message keeps the
    # command the user typed.
    script = (
        f"{options.shell_command_prefix}\n{command}" if options.shell_command_prefix else command
    )
    if options.shell_path and not await backend.exists(options.shell_path):
        raise SessionOperationError(
            f"Custom shell path not found: {options.shell_path}\n"
            "Please update shellPath in your settings."
        )
    argv = [options.shell_path, "-c", script] if options.shell_path else None
    buffer = OutputBuffer(temp_file_prefix="knightcode-bash")
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def on_output(chunk: bytes) -> None:
        buffer.append(chunk)
        text = decoder.decode(chunk)
        if text and on_chunk is not None:
            on_chunk(text)

    try:
        try:
            result = await backend.exec(
                argv,
                shell_command=None if argv else script,
                cwd=str(agent.cwd),
                signal=signal,
                on_output=on_output,
                env=shell_environment(backend.environment(), agent.options.agent_dir, backend),
            )
        except OSError as error:
            raise SessionOperationError(f"Could not run the command: {error}") from error
        buffer.finish()
        rest = decoder.decode(b"", final=True)
        if rest and on_chunk is not None:
            on_chunk(rest)
        snapshot = buffer.snapshot(persist_if_truncated=True)
    finally:
        buffer.close()  # the spill file stays on disk; only our handle is released
    return _message(
        command,
        snapshot.content,
        None if result.aborted else result.exit_code,
        bool(result.aborted),
        snapshot.truncation.truncated,
        snapshot.full_output_path,
        exclude_from_context,
    )


def _message(
    command: str,
    output: str,
    exit_code: int | None,
    cancelled: bool,
    truncated: bool,
    full_output_path: str | None,
    exclude_from_context: bool,
) -> BashExecutionMessage:
    message: BashExecutionMessage = {
        "role": "bashExecution",
        "command": command,
        "output": output,
        "exitCode": exit_code,
        "cancelled": cancelled,
        "truncated": truncated,
    }  # type: ignore[typeddict-item]  # timestamp follows, after fullOutputPath (the file's order)
    if full_output_path:
        message["fullOutputPath"] = full_output_path
    message["timestamp"] = int(time.time() * 1000)
    if exclude_from_context:
        message["excludeFromContext"] = True
    return message


async def record_bash_execution(agent: AgentSession, message: BashExecutionMessage) -> None:
    """Add a ``bashExecution`` message to the conversation and the session file.

    While a prompt runs it waits until the agent is idle: slipped between an assistant's tool
    calls and their results it would break the conversation the provider accepts.
    """
    while agent.is_streaming:
        await agent.wait_idle()
    agent.add_message(message)
