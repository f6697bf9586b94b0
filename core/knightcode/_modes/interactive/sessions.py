"""Moving between and inside sessions: ``/resume`` (and ``-r``), ``/tree``, ``/fork``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp

__all__ = ["fork", "open_tree", "resume", "session_dir"]


def session_dir(app: KnightcodeApp) -> Path:
    """Where this project's sessions are kept (``--session-dir`` > env > settings > default)."""
    from knightcode._session.location import resolve_session_dir

    return resolve_session_dir(
        app.agent.cwd,
        app.agent_dir,
        cli_dir=app.request.session_dir if app.request is not None else None,
        settings_dir=app.settings.session_dir(app.agent.cwd),
    )


async def resume(app: KnightcodeApp, *, at_start: bool = False) -> bool:
    """Pick a session and continue it; False when nothing was picked."""
    directory = session_dir(app)
    chosen = await app.dialogs.pick_session(directory, app.agent.session.session_file)
    if chosen is None:
        return False
    if await app.agent.switch_session(chosen, signal=app.agent.signal):
        app.transcript.notice("A plugin cancelled the switch", "warning")
        return False
    name = app.agent.session.session_name
    app.session_replaced(f"Resumed {name or chosen.name}", quiet=at_start)
    return True


async def open_tree(app: KnightcodeApp) -> None:
    """The tree navigator; moving away from a branch may summarise it (``session_before_tree``
    lets a plugin cancel or provide the summary).
    """
    from knightcode._agent.tree_navigation import TreeResult

    target = await app.dialogs.pick_tree_entry(app.agent.session)
    if target is None:
        return
    if target == app.agent.session.leaf_id:
        app.transcript.notice("Already there")
        return
    choice = await app.dialogs.summarize_choice()
    if choice is None:
        return
    summarize, instructions = choice
    app.set_working("Summarizing the branch…" if summarize else "Moving…")
    try:
        result: TreeResult = await app.agent.navigate_tree(
            target, summarize=summarize, custom_instructions=instructions
        )
    finally:
        app.set_working(None)
    if result.cancelled or result.aborted:
        app.transcript.notice("Navigation cancelled", "warning")
        return
    app.session_replaced("Moved in the session tree")
    if result.editor_text:
        app.set_editor_text(result.editor_text)


async def fork(app: KnightcodeApp) -> None:
    """Pick an earlier user message and continue from it in a new session file."""
    from knightcode._agent.stats import fork_messages

    messages = fork_messages(app.agent)
    if not messages:
        app.transcript.notice("No message to fork from yet")
        return
    labels = [m["text"].splitlines()[0][:100] for m in messages]
    picked = await app.dialogs.select("Fork from which message?", labels)
    if picked is None:
        return
    entry_id = messages[labels.index(picked)]["entryId"]
    result = await app.agent.fork(entry_id)
    if result.cancelled:
        app.transcript.notice("A plugin cancelled the fork", "warning")
        return
    app.session_replaced("Forked into a new session")
    if result.text:
        app.set_editor_text(result.text)
