"""Print (``-p`` / ``--mode text``) and JSON (``--mode json``) modes: answer the command line's
messages one after another, then exit.

Text mode prints the final assistant text on stdout; an error or abort goes to stderr and the
exit status is 1. JSON mode writes the session header and then every session event as one JSONL
record on stdout (``spec/json.md``); nothing else is written to stdout.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TYPE_CHECKING, Any

from knightcode._modes.wire import RecordWriter

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._modes.attachments import Prompts


def final_text(message: dict[str, Any] | None) -> str:
    """The text blocks of an assistant message, joined."""
    if not message:
        return ""
    return "".join(
        block.get("text", "") for block in message.get("content", []) if block.get("type") == "text"
    )


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
        try:
            loop.add_signal_handler(signum, on_signal)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix
            pass
    try:
        for index, text in enumerate(prompts.messages):
            await agent.prompt(text, prompts.images if index == 0 else None, source="rpc")
            if interrupted:
                break
    finally:
        if writer is not None:
            writer.flush()
        agent.session.sync()
    last = next((m for m in reversed(agent.messages) if m.get("role") == "assistant"), None)
    failed = interrupted or (last is not None and last.get("stopReason") in ("error", "aborted"))
    if mode == "text":
        if last is not None and last.get("stopReason") == "error":
            print(
                f"knightcode: error: {last.get('errorMessage') or 'the request failed'}",
                file=sys.stderr,
            )
        elif failed:
            print("knightcode: aborted", file=sys.stderr)
        else:
            text = final_text(last)
            sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))
            sys.stdout.flush()
    return 1 if failed else 0


async def run_print_session(request: Any, host: Any, plan: Any, prompts: Prompts) -> int:
    """Build the agent for a print/JSON run, run it, and shut the plugins down cleanly."""
    from knightcode._modes.setup import build_agent

    agent = await build_agent(request, host, plan)
    for warning in host.warnings:
        print(f"knightcode: warning: {warning}", file=sys.stderr)
    writer = json_writer(agent) if request.mode == "json" else None
    await host.emit("session_start", reason="startup", previous_session_file=None)
    try:
        return await run_print(agent, prompts, request.mode, writer)
    finally:
        if writer is not None:
            writer.flush()
        await host.emit("session_shutdown", reason="quit", target_session_file=None)
        agent.session.close()
        await agent.models.aclose()
