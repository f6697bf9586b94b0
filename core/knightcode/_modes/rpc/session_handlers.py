"""Handlers of the session, bash, export and command-list commands (see :mod:`.handlers`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from knightcode._abort import AbortSignal
from knightcode._agent import stats, user_bash
from knightcode._modes.rpc import commands as c
from knightcode._modes.rpc.handlers import Handler, RpcContext, handles
from knightcode._modes.rpc.responses import NO_DATA, NoData, Record, Reply

if TYPE_CHECKING:
    from knightcode.rpc._types import (
        AssistantText,
        BashResult,
        Cancelled,
        CommandInfo,
        CommandList,
        ExportResult,
        ForkMessageList,
        ForkResult,
        SessionStats,
    )

__all__ = ["SESSION_HANDLERS"]

SESSION_HANDLERS: dict[str, Handler] = {}

C = TypeVar("C", bound=c.RpcCommand)
R = TypeVar("R", bound="Reply | Awaitable[Reply]")


def _handles(
    model: type[C], kind: str
) -> Callable[[Callable[[RpcContext, C], R]], Callable[[RpcContext, C], R]]:
    return handles(SESSION_HANDLERS, model, kind)


# --- bash -----------------------------------------------------------------------------------------


@_handles(c.Bash, "bash")
async def bash(ctx: RpcContext, command: c.Bash) -> BashResult:
    """Runs the command, streaming ``bash_execution_update`` records with the command's ``id``;
    the response carries the (possibly truncated) result, the conversation a ``bashExecution``
    message (recorded once the agent is idle).
    """
    if not command.command.strip():
        raise ValueError("Invalid bash command: command cannot be empty")
    signal = AbortSignal()
    ctx.bash_signals.add(signal)
    base: Record = {"type": "bash_execution_update"}
    if command.id is not None:
        base["id"] = command.id

    def on_chunk(text: str) -> None:
        ctx.write({**base, "delta": text})

    try:
        message = await user_bash.run_user_bash(
            ctx.agent,
            command.command,
            signal=signal,
            on_chunk=on_chunk,
            exclude_from_context=command.excludeFromContext,
        )
    finally:
        ctx.bash_signals.discard(signal)
    if ctx.agent.is_streaming:
        ctx.spawn(user_bash.record_bash_execution(ctx.agent, message))
    else:
        await user_bash.record_bash_execution(ctx.agent, message)
    result: BashResult = {
        "output": message["output"],
        "exitCode": message["exitCode"],
        "cancelled": message["cancelled"],
        "truncated": message["truncated"],
    }
    if "fullOutputPath" in message:
        result["fullOutputPath"] = message["fullOutputPath"]
    return result


@_handles(c.RpcCommand, "abort_bash")
def abort_bash(ctx: RpcContext, command: c.RpcCommand) -> NoData:
    """Kills the process groups of the running ``bash`` commands."""
    for signal in list(ctx.bash_signals):
        signal.abort()
    return NO_DATA


# --- sessions -------------------------------------------------------------------------------------


@_handles(c.NewSession, "new_session")
async def new_session(ctx: RpcContext, command: c.NewSession) -> Cancelled:
    return {"cancelled": await ctx.agent.new_session(command.parentSession)}


@_handles(c.SwitchSession, "switch_session")
async def switch_session(ctx: RpcContext, command: c.SwitchSession) -> Cancelled:
    # The resumed session's model may be looked up at a live server: ``abort`` reaches that.
    with ctx.lookup() as signal:
        return {"cancelled": await ctx.agent.switch_session(command.sessionPath, signal=signal)}


@_handles(c.Fork, "fork")
async def fork(ctx: RpcContext, command: c.Fork) -> ForkResult:
    result = await ctx.agent.fork(command.entryId)
    data: ForkResult = {"cancelled": result.cancelled}
    if result.text is not None:
        data["text"] = result.text
    return data


@_handles(c.RpcCommand, "clone")
async def clone(ctx: RpcContext, command: c.RpcCommand) -> Cancelled:
    return {"cancelled": await ctx.agent.clone()}


@_handles(c.RpcCommand, "get_fork_messages")
def get_fork_messages(ctx: RpcContext, command: c.RpcCommand) -> ForkMessageList:
    return {"messages": stats.fork_messages(ctx.agent)}


@_handles(c.RpcCommand, "get_last_assistant_text")
def get_last_assistant_text(ctx: RpcContext, command: c.RpcCommand) -> AssistantText:
    return {"text": stats.last_assistant_text(ctx.agent)}


@_handles(c.RpcCommand, "get_session_stats")
def get_session_stats(ctx: RpcContext, command: c.RpcCommand) -> SessionStats:
    return stats.session_stats(ctx.agent)


@_handles(c.SetSessionName, "set_session_name")
def set_session_name(ctx: RpcContext, command: c.SetSessionName) -> NoData:
    name = command.name.strip()
    if not name:
        raise ValueError("Session name cannot be empty")
    ctx.agent.set_session_name(name)
    return NO_DATA


@_handles(c.ExportHtml, "export_html")
async def export_html(ctx: RpcContext, command: c.ExportHtml) -> ExportResult:
    """Writes a standalone HTML transcript; ``outputPath`` relative to the working directory,
    by default ``knightcode-session-<session>.html`` there.
    """
    from knightcode._modes.export_cli import default_export_name
    from knightcode._modes.rpc.export_html import render_session_html

    session = ctx.agent.session
    file = session.session_file or Path(f"{session.session_id}.jsonl")
    target = (
        Path(command.outputPath).expanduser()
        if command.outputPath
        else Path(default_export_name(file))
    )
    if not target.is_absolute():
        target = Path(ctx.agent.cwd) / target
    page = render_session_html(session)
    await asyncio.to_thread(_write_text, target, page)
    return {"path": str(target)}


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- plugin commands ------------------------------------------------------------------------------


@_handles(c.RpcCommand, "get_commands")
def get_commands(ctx: RpcContext, command: c.RpcCommand) -> CommandList:
    """The plugins' slash commands, then the prompt templates and skills: what ``prompt``
    runs or expands as ``/name args``.
    """
    listed: list[CommandInfo] = []
    for item in ctx.host.registrations.commands:
        entry: CommandInfo = {
            "name": item.definition.name,
            "description": item.definition.description,
            "source": "extension",
        }
        record = ctx.host.record(item.owner)
        if record is not None:
            entry["location"] = record.kind.value
            entry["path"] = record.source
        listed.append(entry)
    resources = ctx.agent.resources
    if resources is not None:
        for template in resources.templates:
            listed.append(
                {
                    "name": template.name,
                    "description": template.description,
                    "source": "prompt",
                    "location": template.source,
                    "path": str(template.path),
                }
            )
        for skill in resources.skills if resources.skill_commands else ():
            listed.append(
                {
                    "name": f"skill:{skill.name}",
                    "description": skill.description,
                    "source": "skill",
                    "location": skill.source,
                    "path": str(skill.path),
                }
            )
    return {"commands": listed}
