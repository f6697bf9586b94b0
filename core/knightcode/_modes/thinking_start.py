"""The thinking level a run starts with, decided as the reference decides it.

In order: ``--thinking``; for a session that already has entries, the level it recorded (or, when
it recorded none, ``defaultThinkingLevel``); settings ``modelThinkingLevels`` for the model
(``"provider/modelId"``); ``defaultThinkingLevel``; and last :data:`DEFAULT_THINKING_LEVEL`.
A model that does not reason (or no model at all) always starts at ``off``: asking it to think
would be refused by the provider or silently ignored. Any other level is then fitted to the model
as a model switch fits it (:func:`~knightcode._agent.thinking_switch.clamp_thinking_level`): a
level its ``thinkingLevelMap`` maps to ``null`` is unsupported, and ``xhigh``/``max`` exist only
where the map names them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knightcode._agent.thinking_switch import clamp_thinking_level

if TYPE_CHECKING:
    from knightcode._config.settings import SettingsModel
    from knightcode._llm.types import Model
    from knightcode._types.messages import ThinkingLevel

DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium"
"""The reference's default when no setting names a level."""


def start_thinking_level(
    model: Model,
    settings: SettingsModel,
    *,
    explicit: ThinkingLevel | None,
    recorded: ThinkingLevel | None,
    resumed: bool,
) -> ThinkingLevel:
    """The level of the run's first request.

    :param explicit: ``--thinking`` (or a model pattern's ``:level``), None when not given
    :param recorded: the level a resumed session recorded, None when it recorded none
    :param resumed: whether the session already has entries
    """
    if not model.reasoning:
        return "off"
    return clamp_thinking_level(model, _wanted(model, settings, explicit, recorded, resumed))


def _wanted(
    model: Model,
    settings: SettingsModel,
    explicit: ThinkingLevel | None,
    recorded: ThinkingLevel | None,
    resumed: bool,
) -> ThinkingLevel:
    """The level asked for, before it is fitted to the model."""
    if explicit is not None:
        return explicit
    default = settings.default_thinking_level or DEFAULT_THINKING_LEVEL
    if resumed:
        return recorded or default
    per_model = settings.model_thinking_levels.get(f"{model.provider}/{model.id}")
    return per_model or default
