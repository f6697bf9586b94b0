"""Slash commands of the interactive UI: the built-in ones and the plugins'."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp

__all__ = ["BUILTIN_COMMANDS", "BuiltinCommand", "run_command"]

Handler = Callable[["KnightcodeApp", str], Awaitable[None]]


@dataclass(frozen=True)
class BuiltinCommand:
    """A built-in ``/name``: what completion lists and what runs."""

    name: str
    description: str
    handler: Handler


async def run_command(app: KnightcodeApp, text: str) -> bool:
    """Run ``/name args`` if it names a command; False sends the text to the model."""
    name, _, args = text[1:].partition(" ")
    args = args.strip()
    builtin = BUILTIN_COMMANDS.get(name)
    if builtin is not None:
        await builtin.handler(app, args)
        return True
    definition = app.host.registrations.commands.get(name)
    if definition is None:
        return False
    owner = app.host.registrations.commands.owner(name) or "?"
    try:
        assert app.host.context is not None
        result = definition.handler(args, app.host.context)
        if inspect.isawaitable(result):
            await result
    except Exception as error:  # a plugin's failure is reported; the UI goes on
        app.transcript.notice(f"/{name} ({owner}) failed: {error}", "error")
    return True


async def _quit(app: KnightcodeApp, args: str) -> None:
    await app.shutdown()


async def _hotkeys(app: KnightcodeApp, args: str) -> None:
    from rich.table import Table

    table = Table(title="Keyboard shortcuts", show_edge=False, box=None, padding=(0, 2))
    table.add_column("Keys", style="bold")
    table.add_column("Action")
    table.add_column("Id", style="dim")
    for row in app.registry.hotkeys():
        table.add_row(", ".join(row.keys) or "—", row.description, row.action)
    for shortcut in app.registry.shortcuts:
        table.add_row(shortcut.key, shortcut.description or "", f"plugin {shortcut.plugin}")
    app.transcript.add_renderable(table)


async def _name(app: KnightcodeApp, args: str) -> None:
    if not args:
        current = app.agent.session.session_name
        app.transcript.notice(f"Session name: {current}" if current else "Usage: /name <name>")
        return
    app.agent.set_session_name(args)
    app.transcript.notice(f"Session named {args!r}")


async def _session(app: KnightcodeApp, args: str) -> None:
    from knightcode._agent.stats import session_stats

    stats = session_stats(app.agent)
    tokens = stats["tokens"]
    lines = [
        f"File: {stats['sessionFile'] or '(not saved)'}",
        f"Id: {stats['sessionId']}",
        f"Messages: {stats['userMessages']} user, {stats['assistantMessages']} assistant, "
        f"{stats['toolCalls']} tool calls",
        f"Tokens: {tokens['input']} in, {tokens['output']} out, {tokens['cacheRead']} cache read, "
        f"{tokens['cacheWrite']} cache write",
        f"Cost: ${stats['cost']:.4f}",
    ]
    app.transcript.notice("\n".join(lines))


async def _new(app: KnightcodeApp, args: str) -> None:
    if await app.agent.new_session():
        app.transcript.notice("A plugin cancelled the new session", "warning")
    else:
        app.transcript.notice("Started a new session")


async def _compact(app: KnightcodeApp, args: str) -> None:
    try:
        await app.agent.compact(args or None)
    except Exception as error:
        app.transcript.notice(f"Compaction failed: {error}", "error")


BUILTIN_COMMANDS: dict[str, BuiltinCommand] = {
    command.name: command
    for command in (
        BuiltinCommand("quit", "Quit knightcode", _quit),
        BuiltinCommand("exit", "Quit knightcode", _quit),
        BuiltinCommand("hotkeys", "List the keyboard shortcuts", _hotkeys),
        BuiltinCommand("name", "Name this session", _name),
        BuiltinCommand("session", "Show the session file, id, messages, tokens and cost", _session),
        BuiltinCommand("new", "Start a new session", _new),
        BuiltinCommand("compact", "Compact the context [instructions]", _compact),
    )
}
