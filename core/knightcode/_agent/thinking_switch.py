"""The thinking level a model switch lands on (``/model``, ``ctrl+p``, RPC ``set_model`` and
``cycle_model``, a plugin's ``set_model``), decided as the reference decides it.

The level asked for is, in order: an explicit one (a scoped model's ``:level``); settings
``modelThinkingLevels`` for the new model; ``defaultThinkingLevel``; the current level; and last
``medium``. It is then clamped to what the new model supports: a model that does not reason only
has ``off``; a level its ``thinkingLevelMap`` maps to ``null`` is unsupported; ``xhigh`` and
``max`` only exist where the map names them. An unsupported level becomes the nearest supported
one above it, else below.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from knightcode._types.messages import THINKING_CYCLE, THINKING_LEVELS

if TYPE_CHECKING:
    from knightcode._llm.types import Model
    from knightcode._types.messages import ThinkingLevel

__all__ = [
    "clamp_thinking_level",
    "level_for_model_switch",
    "next_thinking_level",
    "supported_thinking_levels",
]

_FALLBACK: ThinkingLevel = "medium"
_OPT_IN = frozenset({"xhigh", "max"})  # levels a model has only when its map names them


def supported_thinking_levels(model: Model) -> tuple[ThinkingLevel, ...]:
    """The levels ``model`` accepts, lowest first."""
    if not model.reasoning:
        return ("off",)
    levels = model.thinking_level_map
    return tuple(
        level
        for level in THINKING_LEVELS
        if not (level in levels and levels[level] is None)
        and (level not in _OPT_IN or level in levels)
    )


def clamp_thinking_level(model: Model, level: ThinkingLevel) -> ThinkingLevel:
    """``level`` if ``model`` supports it, else the nearest supported level above, else below."""
    supported = supported_thinking_levels(model)
    if level in supported:
        return level
    wanted = THINKING_LEVELS.index(level)
    above = [candidate for candidate in THINKING_LEVELS[wanted:] if candidate in supported]
    if above:
        return above[0]
    below = [candidate for candidate in THINKING_LEVELS[:wanted] if candidate in supported]
    return below[-1] if below else (supported[0] if supported else "off")


def level_for_model_switch(
    target: Model,
    current: ThinkingLevel,
    *,
    explicit: ThinkingLevel | None = None,
    default_level: ThinkingLevel | None = None,
    per_model: Mapping[str, ThinkingLevel] | None = None,
) -> ThinkingLevel:
    """The level after switching to ``target`` (see the module docstring).

    :param default_level: settings ``defaultThinkingLevel`` (None: not set)
    :param per_model: settings ``modelThinkingLevels`` (``"provider/modelId"`` keys)
    """
    wanted = explicit
    if wanted is None and per_model:
        wanted = per_model.get(f"{target.provider}/{target.id}")
    if wanted is None:
        wanted = default_level or current or _FALLBACK
    return clamp_thinking_level(target, wanted)


def next_thinking_level(model: Model, current: ThinkingLevel) -> ThinkingLevel:
    """The level after ``current`` for ``shift+tab`` and RPC ``cycle_thinking_level``: the next
    of off → minimal → low → medium → high that ``model`` supports, wrapping around.
    """
    supported = supported_thinking_levels(model)
    cycle = [level for level in THINKING_CYCLE if level in supported] or ["off"]
    index = cycle.index(current) if current in cycle else -1
    return cycle[(index + 1) % len(cycle)]
