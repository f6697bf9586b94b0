"""The ``app.*`` actions of the main screen: what each key of ``spec/keybindings.md`` does."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp

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
    if app.agent.is_streaming:
        queued = app.agent.queues.clear()
        app.agent.abort()
        restored = [text for text in (_text_of(m) for m in queued) if text]
        if restored:
            current = app.editor_text()
            app.set_editor_text("\n".join([*restored, current] if current else restored))


def _text_of(message: object) -> str:
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


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
    queued = app.agent.queues.clear()
    restored = [text for text in (_text_of(m) for m in queued) if text]
    if restored:
        current = app.editor_text()
        app.set_editor_text("\n".join([*restored, current] if current else restored))


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

    text = last_assistant_text(app.agent)
    if text:
        app.copy_to_clipboard_osc52(text)
    else:
        app.transcript.notice("Nothing to copy yet", "warning")


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
}
