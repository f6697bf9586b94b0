"""Replacing the session of an :class:`~knightcode._agent.session.AgentSession`: a new session,
resuming another file, forking and cloning.

Every replacement follows one order, the reference's: ask the ``session_before_*`` hook (a plugin
may cancel), stop running work, fire ``session_shutdown`` while ``ctx.session`` is still the old
session, swap the session and the messages the model sees (:meth:`AgentSession.replace_session`),
then fire ``session_start`` with the previous file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from knightcode._abort import Aborted
from knightcode._errors import KnightcodeError
from knightcode._plugins.results import Cancel, ForkOptions
from knightcode._session.messages import content_text
from knightcode._types.messages import thinking_level_of

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal
    from knightcode._agent.session import AgentSession

__all__ = ["ForkResult", "SessionOperationError", "clone", "fork", "new_session", "switch_session"]


class SessionOperationError(KnightcodeError):
    """A session operation cannot be done as asked (unknown entry, missing file …)."""


@dataclass(frozen=True)
class ForkResult:
    """What :func:`fork` did: ``cancelled`` by a plugin, and the forked user message's text."""

    cancelled: bool
    text: str | None = None


async def _stop(agent: AgentSession) -> None:
    """Abort the running prompt and wait for it, so its messages land in the old session."""
    if agent.is_streaming:
        agent.abort()
        await agent.wait_idle()


async def new_session(agent: AgentSession, parent_session: str | None = None) -> bool:
    """Continue in a fresh, empty session (in the same directory); returns whether a plugin
    cancelled it through ``session_before_switch``.
    """
    from knightcode._session.manager import SessionManager

    hooks = agent.hooks
    if hooks is not None and isinstance(
        await hooks.session_before_switch(reason="new", target_session_file=None), Cancel
    ):
        return True
    await _stop(agent)
    old = agent.session
    previous = old.session_file
    if old.is_persisted and old.session_dir is not None:
        manager = SessionManager.create(old.cwd, old.session_dir)
    else:
        manager = SessionManager.in_memory(old.cwd)
    if parent_session:
        manager.new_session(parent_session=parent_session)
    if hooks is not None:
        await hooks.session_shutdown(reason="new", target_session_file=manager.session_file)
    agent.replace_session(manager)
    agent.record_model_and_thinking()
    if hooks is not None:
        await hooks.session_start(reason="new", previous_session_file=previous)
    return False


async def switch_session(
    agent: AgentSession, session_path: str | Path, signal: AbortSignal | None = None
) -> bool:
    """Resume the session stored in ``session_path``; returns whether a plugin cancelled it.

    :param signal: aborts looking up the recorded model when that asks a live server (a
        discovering provider); the session then keeps the current model
    :raises SessionOperationError: the file does not exist
    """
    from knightcode._session.manager import SessionManager

    target = Path(session_path).expanduser().absolute()
    if not target.is_file():
        raise SessionOperationError(f"Session file not found: {session_path}")
    hooks = agent.hooks
    if hooks is not None and isinstance(
        await hooks.session_before_switch(reason="resume", target_session_file=target), Cancel
    ):
        return True
    await _stop(agent)
    previous = agent.session.session_file
    manager = SessionManager.open(target)
    if hooks is not None:
        await hooks.session_shutdown(reason="resume", target_session_file=manager.session_file)
    agent.replace_session(manager)
    if manager.get_entries():
        # Adopt the model and thinking level the resumed session recorded (when still known).
        context = manager.build_context()
        recorded = context.model
        model = None
        if recorded is not None:
            try:
                model = await agent.model_registry.find(
                    recorded.provider, recorded.model_id, signal=signal
                )
            except Aborted:
                model = None  # the person stopped waiting for the server: keep the current one
        await agent.restore_recorded(
            model, thinking_level_of(context.thinking_level) or agent.thinking_level
        )
    if hooks is not None:
        await hooks.session_start(reason="resume", previous_session_file=previous)
    return False


async def fork(
    agent: AgentSession, entry_id: str, position: Literal["before", "at"] = "before"
) -> ForkResult:
    """Continue in a new session file holding the branch up to ``entry_id``.

    ``"before"`` forks from the parent of a user message (its text is returned so a UI can put
    it back into the editor); ``"at"`` forks including the entry (``clone``).

    :raises SessionOperationError: no such entry, or not a user message for ``"before"``
    """
    entry = agent.session.get_entry(entry_id)
    if entry is None:
        raise SessionOperationError("Invalid entry ID for forking")
    text: str | None = None
    target: str | None = entry_id
    if position == "before":
        if entry["type"] != "message" or entry["message"]["role"] != "user":
            raise SessionOperationError("Invalid entry ID for forking")
        target = entry["parentId"]
        text = content_text(entry["message"]["content"])
    hooks = agent.hooks
    verdict = (
        await hooks.session_before_fork(entry_id=entry_id, position=position)
        if hooks is not None
        else None
    )
    if isinstance(verdict, Cancel):
        return ForkResult(True)
    keep_conversation = isinstance(verdict, ForkOptions) and verdict.skip_conversation_restore
    await _stop(agent)
    manager = agent.session
    previous = manager.session_file
    # The target file is only named once the fork exists, so plugins learn it from session_start.
    if hooks is not None:
        await hooks.session_shutdown(reason="fork", target_session_file=None)
    manager.sync()
    if target is None:
        manager.new_session(parent_session=str(previous) if previous is not None else None)
    else:
        manager.create_branched_session(target)
    agent.replace_session(manager, restore_messages=not keep_conversation)
    agent.record_model_and_thinking()
    if hooks is not None:
        await hooks.session_start(reason="fork", previous_session_file=previous)
    return ForkResult(False, text)


async def clone(agent: AgentSession) -> bool:
    """Copy the current branch into a new session file and continue there; returns whether a
    plugin cancelled it.

    :raises SessionOperationError: the session has no entries yet
    """
    leaf = agent.session.leaf_id
    if leaf is None:
        raise SessionOperationError("Cannot clone session: no current entry selected")
    return (await fork(agent, leaf, position="at")).cancelled
