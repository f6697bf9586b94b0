"""What the plugin remembers per agent session, and how it reads the session's settings.

The plugin is a module, loaded once per process, while an embedding program may run several
:class:`~knightcode._agent.session.AgentSession` objects; state is therefore kept per session in
a weak mapping, so it disappears with its session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import weakref
from dataclasses import dataclass
from typing import Any

__all__ = ["AgentState", "DefaultBudgets", "agent_signal", "effective_settings", "state_of"]

BREAKER_LIMIT = 3
"""Consecutive automatic compactions that freed too little before automatic compaction stops."""


@dataclass
class AgentState:
    """Per-session state.

    :ivar recovery_attempted: an overflow/length recovery already ran for the current prompt
    :ivar recovery_trigger: which one (``"overflow"`` or ``"length"``)
    :ivar low_yield_streak: consecutive automatic compactions that freed too little
    :ivar breaker_open: automatic threshold compaction is stopped (until a manual compaction)
    """

    recovery_attempted: bool = False
    recovery_trigger: str | None = None
    low_yield_streak: int = 0
    breaker_open: bool = False


_STATES: weakref.WeakKeyDictionary[Any, AgentState] = weakref.WeakKeyDictionary()


def state_of(agent: Any) -> AgentState:
    """The state of ``agent`` (created on first use)."""
    state = _STATES.get(agent)
    if state is None:
        state = _STATES[agent] = AgentState()
    return state


@dataclass(frozen=True)
class DefaultBudgets:
    """The built-in compaction settings, for a context without loaded settings."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


def effective_settings(ctx: Any, agent: Any, model: Any) -> Any:
    """The compaction settings for ``model``: ``compaction`` with its ``modelOverrides`` entry
    applied, ``enabled`` reflecting the session's switch (``set_auto_compaction``).

    :raises knightcode.SettingsError: an invalid value in the settings files
    """
    enabled = bool(getattr(agent, "auto_compaction_enabled", True))
    settings = getattr(ctx, "settings", None)
    if settings is None or not hasattr(settings, "compaction_for"):
        return DefaultBudgets(enabled=enabled)
    resolved = settings.compaction_for(model.provider, model.id)
    return dataclasses.replace(resolved, enabled=enabled)


def agent_signal(agent: Any) -> asyncio.Event:
    """The abort signal of the session's current run (set by ``agent.abort()``)."""
    # AgentSession keeps it private for now; a public ``signal`` is preferred when it exists.
    for name in ("signal", "_signal"):
        value = getattr(agent, name, None)
        if isinstance(value, asyncio.Event):
            return value
    return asyncio.Event()
