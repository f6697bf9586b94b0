"""Print (``-p`` / ``--mode text``) and JSON (``--mode json``) modes: answer the command line's
messages one after another, then exit.

Text mode prints the final assistant text on stdout; an error or abort goes to stderr and the
exit status is 1. JSON mode writes the session header and then every session event as one JSONL
record on stdout (``spec/json.md``); nothing else is written to stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import TYPE_CHECKING

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


def json_writer(agent: AgentSession) -> RecordWriter:
    """Start the JSON stream: the session header, then every event of ``agent``."""
    writer = RecordWriter(sys.stdout.buffer)
    writer.write(dict(agent.session.header))
    agent.subscribe(writer.write_event)
    return writer


async def run_print(
    agent: AgentSession, prompts: Prompts, mode: str, writer: RecordWriter | None = None
) -> int:
    """Run the prompts in ``mode`` (``text`` or ``json``) and return the exit status."""
    loop = asyncio.get_running_loop()
    interrupted = False

    def on_signal() -> None:
        nonlocal interrupted
        interrupted = True
        agent.abort()

    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # non-Unix
            loop.add_signal_handler(signum, on_signal)
    try:
        for index, text in enumerate(prompts.messages):
            await agent.prompt(text, prompts.images if index == 0 else None, source="rpc")
            if interrupted:
                break
    finally:
        if writer is not None:
            writer.flush()
        agent.session.sync()
    last = last_assistant(agent.messages)
    failed = interrupted or (last is not None and last["stopReason"] in ("error", "aborted"))
    if mode == "text":
        if last is not None and last["stopReason"] == "error":
            reason = last.get("errorMessage") or "the request failed"
            print(f"knightcode: error: {reason}", file=sys.stderr)
        elif failed:
            print("knightcode: aborted", file=sys.stderr)
        else:
            text = content_text(last["content"]) if last is not None else ""
            sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))
            sys.stdout.flush()
    # A session that could not be written was reported when it failed; the answer is shown
    # all the same, and the status says it was not saved.
    unsaved = agent.session.write_error is not None
    return 1 if failed or unsaved else 0


async def run_print_session(
    request: RunRequest, host: PluginHost, plan: LoadPlan, prompts: Prompts
) -> int:
    """Build the agent for a print/JSON run, run it, and shut the plugins down cleanly."""
    from knightcode._modes.setup import build_agent, report_session_notices

    agent = await build_agent(request, host, plan)
    for warning in host.warnings:
        print(f"knightcode: warning: {warning}", file=sys.stderr)
    writer = json_writer(agent) if request.mode == "json" else None
    report_session_notices(agent, writer.write if writer is not None else None)
    await host.hooks.session_start(reason="startup", previous_session_file=None)
    try:
        return await run_print(agent, prompts, request.mode, writer)
    finally:
        if writer is not None:
            writer.flush()
        await host.hooks.session_shutdown(reason="quit", target_session_file=None)
        if host.context is not None:
            await host.context.aclose()
        agent.session.close()
        await agent.model_registry.aclose()
