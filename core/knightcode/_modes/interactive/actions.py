"""The ``app.*`` actions of the main screen: what each key of ``spec/keybindings.md`` does."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._types.messages import AgentMessage

__all__ = ["perform"]

#: A second ``app.clear`` within this many seconds exits (the reference's double ctrl+c).
DOUBLE_PRESS_SECONDS = 0.5


async def perform(app: KnightcodeApp, action: str) -> None:
    """Do ``action``; unknown or not-yet-available actions say so in the transcript."""
    handler = _ACTIONS.get(action)
    if handler is None:
        app.transcript.notice(f"{action} is not available yet", "warning")
        return
    await handler(app)


async def _interrupt(app: KnightcodeApp) -> None:
    if app.shell_signal is not None:
        app.shell_signal.abort()
        return
    if not app.agent.is_streaming:
        now = time.monotonic()
        double = now - app._escape_pressed_at < DOUBLE_PRESS_SECONDS
        app._escape_pressed_at = now
        if double and not app.editor_text():
            action = app.settings_model().double_escape_action
            if action == "tree":
                await _session_tree(app)
            elif action == "fork":
                await _session_fork(app)
        return
    queued = app.agent.queues.clear()
    app.agent.abort()
    _back_to_editor(app, queued)


def _back_to_editor(app: KnightcodeApp, queued: list[AgentMessage]) -> None:
    """Put the texts of queued messages back into the editor, above what is typed there."""
    from knightcode._session.messages import content_text

    restored = [
        text
        for message in queued
        if message["role"] == "user" and (text := content_text(message["content"]).strip())
    ]
    if restored:
        current = app.editor_text()
        app.set_editor_text("\n".join([*restored, current] if current else restored))


async def _clear(app: KnightcodeApp) -> None:
    now = time.monotonic()
    if now - app._clear_pressed_at < DOUBLE_PRESS_SECONDS:
        await app.shutdown()
        return
    app._clear_pressed_at = now
    app.editor.clear_prompt()


async def _exit(app: KnightcodeApp) -> None:
    if not app.editor_text():
        await app.shutdown()


async def _suspend(app: KnightcodeApp) -> None:
    import os
    import signal

    from knightcode._modes.interactive.terminal import handed_back

    with handed_back(app, app.keyboard):
        # The process stops here and goes on when the shell continues it (fg).
        os.kill(os.getpid(), signal.SIGTSTP)


async def _follow_up(app: KnightcodeApp) -> None:
    text = app.editor_text()
    app.set_editor_text("")
    app.follow_up(text)


async def _dequeue(app: KnightcodeApp) -> None:
    _back_to_editor(app, app.agent.queues.clear())


async def _toggle_tools(app: KnightcodeApp) -> None:
    app.transcript.options.expand_tools = not app.transcript.options.expand_tools
    app.reprint()


async def _toggle_thinking(app: KnightcodeApp) -> None:
    app.transcript.options.show_thinking = not app.transcript.options.show_thinking
    app.reprint()


async def _model_select(app: KnightcodeApp) -> None:
    from knightcode._modes.interactive.models import choose_model

    await choose_model(app)


async def _model_next(app: KnightcodeApp) -> None:
    from knightcode._modes.interactive.models import cycle_model

    await cycle_model(app, 1)


async def _model_previous(app: KnightcodeApp) -> None:
    from knightcode._modes.interactive.models import cycle_model

    await cycle_model(app, -1)


async def _thinking_cycle(app: KnightcodeApp) -> None:
    from knightcode._modes.interactive.models import cycle_thinking

    await cycle_thinking(app)


async def _session_new(app: KnightcodeApp) -> None:
    from knightcode._modes.interactive.commands import run_command

    await run_command(app, "/new")


async def _session_tree(app: KnightcodeApp) -> None:
    from knightcode._modes.interactive.sessions import open_tree

    await open_tree(app)


async def _session_fork(app: KnightcodeApp) -> None:
    from knightcode._modes.interactive.sessions import fork

    await fork(app)


async def _session_resume(app: KnightcodeApp) -> None:
    from knightcode._modes.interactive.sessions import resume

    await resume(app)


async def _external_editor(app: KnightcodeApp) -> None:
    await app.edit_externally()


async def _message_copy(app: KnightcodeApp) -> None:
    from knightcode._agent.stats import last_assistant_text

    if app.selected_text and not app.settings_model().fullscreen_copy_on_select:
        app.copy_to_clipboard_osc52(app.selected_text)  # fullscreen: the mouse selection
        return
    text = last_assistant_text(app.agent)
    if text:
        app.copy_to_clipboard_osc52(text)
    else:
        app.transcript.notice("Nothing to copy yet", "warning")


async def _paste_from_clipboard(app: KnightcodeApp) -> None:
    import asyncio
    import base64

    from textual import events

    from knightcode._modes.interactive.clipboard import read_clipboard

    found = await asyncio.to_thread(read_clipboard)
    if found is None:
        app.transcript.notice(
            "No clipboard program to read from (wl-paste or xclip); your terminal's paste "
            "works for text",
            "warning",
        )
        return
    mime, data = found
    if mime == "text/plain":
        app.editor.post_message(events.Paste(data.decode("utf-8", errors="replace")))
        return
    encoded = base64.b64encode(data).decode("ascii")
    number = app.attach_image({"type": "image", "data": encoded, "mimeType": mime})
    app.editor.insert(f"[image #{number}] ")


_ACTIONS = {
    "app.interrupt": _interrupt,
    "app.clear": _clear,
    "app.exit": _exit,
    "app.suspend": _suspend,
    "app.message.followUp": _follow_up,
    "app.message.dequeue": _dequeue,
    "app.tools.expand": _toggle_tools,
    "app.thinking.toggle": _toggle_thinking,
    "app.thinking.cycle": _thinking_cycle,
    "app.model.select": _model_select,
    "app.model.cycleForward": _model_next,
    "app.model.cycleBackward": _model_previous,
    "app.session.new": _session_new,
    "app.session.tree": _session_tree,
    "app.session.fork": _session_fork,
    "app.session.resume": _session_resume,
    "app.editor.external": _external_editor,
    "app.message.copy": _message_copy,
    "app.clipboard.pasteImage": _paste_from_clipboard,
}
