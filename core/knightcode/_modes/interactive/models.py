"""Choosing the model: ``/model``, ``ctrl+p`` cycling through the scoped models, ``/scoped-models``,
and the thinking level (``shift+tab``).

A model chosen on purpose (selector, ``/model id``, cycling) becomes the default of the next
start (``defaultProvider``/``defaultModel`` in the user's settings), as in the reference; the
scope (``enabledModels``) is saved by ``/scoped-models``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._llm.model_match import PatternMatch
    from knightcode._llm.types import Model
    from knightcode._modes.interactive.app import KnightcodeApp

#: How long the model selector waits for live providers before it opens anyway.
REFRESH_SECONDS = 2.0

__all__ = [
    "choose_model",
    "cycle_model",
    "cycle_thinking",
    "edit_scoped_models",
    "scoped_models",
    "switch_model",
]


def scoped_models(app: KnightcodeApp) -> list[Model]:
    """The models ``ctrl+p`` cycles through: the model scope (``--models``, else settings
    ``enabledModels``: patterns such as ``anthropic/*`` or ``sonnet:high``, in their order) over
    the available ones, else all available.
    """
    return [match.model for match in _scope(app)]


def _scope(app: KnightcodeApp) -> list[PatternMatch]:
    from knightcode._llm.model_match import PatternMatch
    from knightcode._modes.model_scope import resolve_scope, scope_patterns

    available = app.agent.model_registry.available()
    scope = resolve_scope(available, scope_patterns(app.host))
    return scope.matches or [PatternMatch(model) for model in available]


def _save_default(app: KnightcodeApp, model: Model) -> None:
    from knightcode._config.edit_settings import set_setting
    from knightcode._errors import KnightcodeError

    path = app.agent_dir / "settings.json"
    try:
        set_setting(path, "defaultProvider", model.provider)
        set_setting(path, "defaultModel", model.id)
    except (KnightcodeError, OSError) as error:
        app.transcript.notice(f"Could not save the default model in {path}: {error}", "warning")


async def switch_model(app: KnightcodeApp, model: Model, *, cycled: bool = False) -> None:
    """Use ``model`` from the next request on, and remember it for the next start."""
    await app.agent.set_model(model, source="cycle" if cycled else "set")
    _save_default(app, model)
    app.refresh_footer()
    app.transcript.notice(f"Model: {model.ref}")


async def cycle_model(app: KnightcodeApp, step: int) -> None:
    """The next (``step`` 1) or previous (-1) model of the scope, with its pattern's level."""
    matches = _scope(app)
    current = app.agent.model
    keys = [match.model.ref for match in matches]
    if not matches or (len(matches) == 1 and keys[0] == current.ref):
        app.transcript.notice("No other model to switch to (see /scoped-models, /login)")
        return
    index = keys.index(current.ref) if current.ref in keys else (-1 if step > 0 else 0)
    chosen = matches[(index + step) % len(matches)]
    await switch_model(app, chosen.model, cycled=True)
    if chosen.thinking is not None:
        await app.agent.set_thinking_level(chosen.thinking)
        app.refresh_footer()


async def cycle_thinking(app: KnightcodeApp) -> None:
    from knightcode._agent.thinking_switch import next_thinking_level

    if not app.agent.model.reasoning:
        app.transcript.notice(f"{app.agent.model.ref or 'This model'} does not think")
        return
    await app.agent.set_thinking_level(
        next_thinking_level(app.agent.model, app.agent.thinking_level)
    )
    app.refresh_footer()


async def choose_model(app: KnightcodeApp) -> None:
    """The model selector: every known model, the unavailable ones greyed with the reason."""
    registry = app.agent.model_registry
    try:
        # A live provider (a llama.cpp router) is asked what it has now, but a slow one must
        # not keep the selector from opening: after a moment the known list is shown.
        await asyncio.wait_for(registry.refresh_models(), REFRESH_SECONDS)
    except TimeoutError:
        app.transcript.notice("A provider did not list its models in time", "warning")
    except Exception as error:  # a live provider being down must not hide the others
        app.transcript.notice(f"Could not refresh the model list: {error}", "warning")
    chosen = await app.dialogs.pick_model(registry.models, app.agent.model)
    if chosen is not None and chosen.ref != app.agent.model.ref:
        await switch_model(app, chosen)


async def edit_scoped_models(app: KnightcodeApp) -> None:
    from knightcode._config.edit_settings import set_setting
    from knightcode._errors import KnightcodeError

    available = app.agent.model_registry.available()
    from knightcode._modes.model_scope import scope_patterns

    enabled = [m.ref for m in scoped_models(app)] if scope_patterns(app.host) else []
    result = await app.dialogs.scoped_models(available, enabled)
    if result is None:
        return
    path = app.agent_dir / "settings.json"
    try:
        set_setting(path, "enabledModels", result or None)
    except (KnightcodeError, OSError) as error:
        app.transcript.notice(f"Could not save enabledModels in {path}: {error}", "error")
        return
    app.host.model_patterns = None  # the saved scope replaces this run's --models
    app.reload_settings()
    described = ", ".join(result) if result else "all available models"
    app.transcript.notice(f"ctrl+p cycles through: {described}")
