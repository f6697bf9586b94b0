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
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Table | Text] = [Text("Keyboard shortcuts", style="bold")]
    table: Table | None = None
    section = None
    for row in app.registry.hotkeys():
        if row.section != section or table is None:
            section = row.section
            table = Table(title=section, title_justify="left", show_header=False, box=None)
            table.add_column("Keys", style="bold", min_width=24)
            table.add_column("Action")
            table.add_column("Id", style="dim")
            parts.append(table)
        table.add_row(row.keys or "(unbound)", row.description, row.action)
    app.transcript.add_renderable(Group(*parts))


async def _keys(app: KnightcodeApp, args: str) -> None:
    from knightcode._keys.keys_command import keys_report

    app.transcript.add_renderable(await keys_report(app.registry))


async def _name(app: KnightcodeApp, args: str) -> None:
    if not args:
        current = app.agent.session.session_name
        app.transcript.notice(f"Session name: {current}" if current else "Usage: /name <name>")
        return
    app.agent.set_session_name(args)
    app.transcript.notice(f"Session named {args!r}")
    app.refresh_footer()


async def _session(app: KnightcodeApp, args: str) -> None:
    from knightcode._agent.stats import session_stats

    stats = session_stats(app.agent)
    tokens = stats["tokens"]
    usage = stats["contextUsage"]
    percent = f"{usage['percent']:.1f}%" if usage["percent"] is not None else "?"
    lines = [
        f"File: {stats['sessionFile'] or '(not saved)'}",
        f"Id: {stats['sessionId']}",
        f"Name: {app.agent.session.session_name or '(none)'}",
        f"Messages: {stats['userMessages']} user, {stats['assistantMessages']} assistant, "
        f"{stats['toolCalls']} tool calls, {stats['totalMessages']} in all",
        f"Tokens: {tokens['input']} in, {tokens['output']} out, {tokens['cacheRead']} cache read, "
        f"{tokens['cacheWrite']} cache write",
        f"Cost: ${stats['cost']:.4f}",
        f"Context: {usage['tokens']} of {usage['contextWindow']} tokens ({percent})",
    ]
    app.transcript.notice("\n".join(lines))


async def _new(app: KnightcodeApp, args: str) -> None:
    if await app.agent.new_session():
        app.transcript.notice("A plugin cancelled the new session", "warning")
        return
    app.session_replaced("Started a new session")


async def _compact(app: KnightcodeApp, args: str) -> None:
    try:
        verdict = await app.agent.compact(args or None)
    except Exception as error:
        app.transcript.notice(f"Compaction failed: {error}", "error")
        return
    app.after_compaction(verdict)


async def _model(app: KnightcodeApp, args: str) -> None:
    from knightcode._modes.interactive.models import choose_model, switch_model

    if args:
        try:
            model = await app.agent.model_registry.resolve(args)
        except Exception as error:
            app.transcript.notice(str(error), "error")
            return
        await switch_model(app, model)
        return
    await choose_model(app)


async def _scoped_models(app: KnightcodeApp, args: str) -> None:
    from knightcode._modes.interactive.models import edit_scoped_models

    await edit_scoped_models(app)


async def _settings(app: KnightcodeApp, args: str) -> None:
    from knightcode._modes.interactive.settings_ui import edit_settings

    await edit_settings(app)


async def _resume(app: KnightcodeApp, args: str) -> None:
    from knightcode._modes.interactive.sessions import resume

    await resume(app)


async def _tree(app: KnightcodeApp, args: str) -> None:
    from knightcode._modes.interactive.sessions import open_tree

    await open_tree(app)


async def _fork(app: KnightcodeApp, args: str) -> None:
    from knightcode._modes.interactive.sessions import fork

    await fork(app)


async def _clone(app: KnightcodeApp, args: str) -> None:
    if await app.agent.clone():
        app.transcript.notice("A plugin cancelled the clone", "warning")
        return
    app.session_replaced("Cloned the session: you are in the copy now")


async def _copy(app: KnightcodeApp, args: str) -> None:
    from knightcode._agent.stats import last_assistant_text

    text = last_assistant_text(app.agent)
    if not text:
        app.transcript.notice("Nothing to copy yet", "warning")
        return
    app.copy_to_clipboard_osc52(text)


async def _export(app: KnightcodeApp, args: str) -> None:
    import asyncio
    from pathlib import Path

    from knightcode._modes.rpc.export_html import render_session_html

    session = app.agent.session
    stem = session.session_file.stem if session.session_file is not None else session.session_id
    target = Path(args).expanduser() if args else Path(f"knightcode-session-{stem}.html")
    if not target.is_absolute():
        target = app.agent.cwd / target
    page = render_session_html(session)

    def write() -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")

    try:
        await asyncio.to_thread(write)
    except OSError as error:
        app.transcript.notice(f"Could not export to {target}: {error.strerror}", "error")
        return
    app.transcript.notice(f"Exported the session to {target}")


async def _reload(app: KnightcodeApp, args: str) -> None:
    from knightcode._modes.interactive.reload import reload_everything

    await reload_everything(app)


async def _login(app: KnightcodeApp, args: str) -> None:
    from knightcode._modes.interactive.auth import login

    await login(app, args)


async def _logout(app: KnightcodeApp, args: str) -> None:
    from knightcode._modes.interactive.auth import logout

    await logout(app, args)


async def _changelog(app: KnightcodeApp, args: str) -> None:
    from rich.markdown import Markdown

    from knightcode._modes.interactive.changelog import read_changelog

    text = read_changelog()
    if text is None:
        app.transcript.notice("The changelog is not installed with this copy", "warning")
        return
    app.transcript.add_renderable(Markdown(text))


async def _fullscreen(app: KnightcodeApp, args: str) -> None:
    app.toggle_fullscreen()


BUILTIN_COMMANDS: dict[str, BuiltinCommand] = {
    command.name: command
    for command in (
        BuiltinCommand("model", "Pick the model (or /model provider/id)", _model),
        BuiltinCommand("scoped-models", "Choose the models ctrl+p cycles through", _scoped_models),
        BuiltinCommand("settings", "Thinking level, queue modes, auto-compaction …", _settings),
        BuiltinCommand("resume", "Resume another session", _resume),
        BuiltinCommand("new", "Start a new session", _new),
        BuiltinCommand("name", "Name this session", _name),
        BuiltinCommand("session", "Show the session file, id, messages, tokens and cost", _session),
        BuiltinCommand("tree", "Move to another point of the session tree", _tree),
        BuiltinCommand("fork", "Continue from an earlier message in a new session", _fork),
        BuiltinCommand("clone", "Copy this session and continue in the copy", _clone),
        BuiltinCommand("compact", "Compact the context [instructions]", _compact),
        BuiltinCommand("copy", "Copy the last answer to the clipboard", _copy),
        BuiltinCommand("export", "Write the session as HTML [file]", _export),
        BuiltinCommand(
            "reload",
            "Reload plugins, settings, keybindings, context files, skills, prompts and MCP",
            _reload,
        ),
        BuiltinCommand("hotkeys", "List the keyboard shortcuts", _hotkeys),
        BuiltinCommand("keys", "Which keys this terminal cannot send, and alternatives", _keys),
        BuiltinCommand(
            "fullscreen", "Switch between fullscreen and inline (the same session)", _fullscreen
        ),
        BuiltinCommand("login", "Store an API key for a provider (or its own login)", _login),
        BuiltinCommand("logout", "Remove a stored API key", _logout),
        BuiltinCommand("changelog", "What changed in each version", _changelog),
        BuiltinCommand("quit", "Quit knightcode", _quit),
        BuiltinCommand("exit", "Quit knightcode", _quit),
    )
}
