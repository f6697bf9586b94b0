"""What the plugin remembers per agent session, and how it reads the session's settings.

The plugin is a module, loaded once per process, while an embedding program may run several
sessions; state is therefore kept per session in a weak mapping, so it disappears with its
session.
"""

from __future__ import annotations

import dataclasses
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode import AgentHandle, CompactionSettings, HookContext, Model

__all__ = ["BREAKER_LIMIT", "AgentState", "effective_settings", "state_of"]

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


_STATES: weakref.WeakKeyDictionary[AgentHandle, AgentState] = weakref.WeakKeyDictionary()


def state_of(agent: AgentHandle) -> AgentState:
    """The state of ``agent`` (created on first use)."""
    state = _STATES.get(agent)
    if state is None:
        state = _STATES[agent] = AgentState()
    return state


def effective_settings(ctx: HookContext, agent: AgentHandle, model: Model) -> CompactionSettings:
    """The compaction settings for ``model``: ``compaction`` with its ``modelOverrides`` entry
    applied, an unset ``reserveTokens`` fitted to the model's window (``for_window``: 30% of a
    small one), ``enabled`` reflecting the session's switch (``set_auto_compaction``).

    :raises knightcode.SettingsError: an invalid value in the settings files
    """
    resolved = ctx.settings.compaction_for(model.provider, model.id)
    resolved = resolved.for_window(model.context_window)
    return dataclasses.replace(resolved, enabled=agent.auto_compaction_enabled)
