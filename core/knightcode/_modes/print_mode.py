"""Print (``-p`` / ``--mode text``) and JSON (``--mode json``) modes: answer the command line's
messages one after another, then exit.

Text mode prints the final assistant text on stdout; an error or abort goes to stderr and the
exit status is 1. JSON mode writes the session header and then every session event as one JSONL
record on stdout (``spec/json.md``); nothing else is written to stdout: the command line took
stdout over before plugins were imported (:mod:`knightcode._modes.stdout`), so what plugins
print goes to stderr.
"""

from __future__ import annotations

import signal
import sys
from typing import IO, TYPE_CHECKING

from knightcode._agent.retry import last_assistant
from knightcode._modes.wire import RecordWriter
from knightcode._session.messages import content_text

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._cli.main_command import RunRequest
    from knightcode._modes.attachments import Prompts
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.planning import LoadPlan

__all__ = ["json_writer", "run_print", "run_print_session"]


def json_writer(agent: AgentSession, output: IO[bytes] | None = None) -> RecordWriter:
    """Start the JSON stream on ``output`` (default: stdout): the session header, then every
    event of ``agent``.
    """
    writer = RecordWriter(output if output is not None else sys.stdout.buffer)
    writer.write(dict(agent.session.header))
    agent.subscribe(writer.write_event)
    return writer


async def run_print(
    agent: AgentSession,
    prompts: Prompts,
    mode: str,
    writer: RecordWriter | None = None,
    output: IO[bytes] | None = None,
    stop: Stopping | None = None,
    host: PluginHost | None = None,
) -> int:
    """Run the prompts in ``mode`` (``text`` or ``json``) and return the exit status.

    :param output: where text mode prints the answer (default: ``sys.stdout``)
    :param stop: the mode's stop state (a stop signal before or during a prompt aborts it)
    :param host: the plugins, whose slash commands a message may name (``-p /name args`` runs
        the command instead of prompting)
    """
    stop = stop or Stopping()
    stop.agent = agent
    try:
        for index, text in enumerate(prompts.messages):
            if stop.requested:
                break
            if host is not None and await _ran_command(host, text, writer):
                continue
            await agent.prompt(text, prompts.images if index == 0 else None, source="rpc")
    finally:
        if writer is not None:
            writer.flush()
        agent.session.sync()
    last = last_assistant(agent.messages)
    failed = stop.requested or (last is not None and last["stopReason"] in ("error", "aborted"))
    if mode == "text":
        if last is not None and last["stopReason"] == "error":
            reason = last.get("errorMessage") or "the request failed"
            print(f"knightcode: error: {reason}", file=sys.stderr)
        elif failed:
            print("knightcode: aborted", file=sys.stderr)
        elif last is not None:  # (only plugin commands ran: nothing to print)
            text = content_text(last["content"])
            failed = not _print_answer(text + ("" if text.endswith("\n") else "\n"), output)
    elif stop.requested:
        print("knightcode: aborted", file=sys.stderr)
    # A session that could not be written was reported when it failed; the answer is shown
    # all the same, and the status says it was not saved.
    unsaved = agent.session.write_error is not None
    unwritten = writer is not None and writer.error is not None
    return 1 if failed or unsaved or unwritten else 0


async def _ran_command(host: PluginHost, text: str, writer: RecordWriter | None) -> bool:
    """Run ``text`` as a plugin command if it names one; a failure is an ``extension_error``
    record (JSON) or a line on stderr (text), and the next message goes on.
    """
    from knightcode._plugins.commands import find_plugin_command

    command = find_plugin_command(host, text)
    if command is None:
        return False
    failure = await command.run(host)
    if failure is not None:
        if writer is not None:
            writer.write(failure)
        else:
            print(
                f"knightcode: /{command.name} ({command.owner}) failed: {failure['error']}",
                file=sys.stderr,
            )
    return True


def _print_answer(text: str, output: IO[bytes] | None) -> bool:
    """Write the answer to stdout; False (and one line on stderr) when it cannot be written.

    A reader that went away (``| head``) is not an error: it had what it wanted.
    """
    try:
        if output is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            output.write(text.encode("utf-8", "surrogateescape"))
            output.flush()
    except BrokenPipeError:
        return True
    except OSError as error:
        print(
            f"knightcode: error: cannot write the answer to stdout: {error.strerror or error}",
            file=sys.stderr,
        )
        return False
    return True


class Stopping:
    """A stop signal arrived: what to abort once (``agent``, when built), and what to make
    durable before exiting on a second one.
    """

    def __init__(self) -> None:
        self.requested = False
        self.agent: AgentSession | None = None

    def stop(self) -> None:
        """The first stop signal: abort the run (the prompts after it do not start)."""
        self.requested = True
        if self.agent is not None:
            self.agent.abort()

    def exit_now(self) -> None:
        """The second one: sync the session file (appends are whole lines: it stays loadable)."""
        if self.agent is not None:
            self.agent.session.sync()


async def run_print_session(
    request: RunRequest, host: PluginHost, plan: LoadPlan, prompts: Prompts
) -> int:
    """Build the agent for a print/JSON run, run it, and shut the plugins down cleanly.

    Stop signals are handled from the start, so a plugin hanging in ``session_start`` (or in
    any hook before the prompt) is stopped too; see :mod:`knightcode._modes.signals`.
    """
    from knightcode._modes.setup import build_agent, report_session_notices
    from knightcode._modes.signals import StopSignals
    from knightcode._plugins.watchdog import watching

    stop = Stopping()
    with watching(), StopSignals((signal.SIGINT, signal.SIGTERM), stop.stop, stop.exit_now):
        agent = stop.agent = await build_agent(request, host, plan)
        for warning in host.warnings:
            print(f"knightcode: warning: {warning}", file=sys.stderr)
        writer = json_writer(agent, request.output) if request.mode == "json" else None
        report_session_notices(agent, writer.write if writer is not None else None)
        await host.hooks.session_start(reason="startup", previous_session_file=None)
        try:
            return await run_print(agent, prompts, request.mode, writer, request.output, stop, host)
        finally:
            if writer is not None:
                writer.flush()
            await host.hooks.session_shutdown(reason="quit", target_session_file=None)
            if host.context is not None:
                await host.context.aclose()
            agent.session.close()
            await agent.model_registry.aclose()
