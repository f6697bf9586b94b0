"""``--model`` patterns as the reference reads them: fuzzy ids and a ``:level`` suffix.

A user of the reference types ``--model sonnet`` or ``--model anthropic/opus:high``; the
registry's exact look-up (:meth:`ModelRegistry.resolve`) knows only whole ids. The rules here
are the reference's: an exact id (case-insensitive) first, then every model whose id or name
contains the pattern, preferring an *alias* (no ``-YYYYMMDD`` date at the end, or ``-latest``)
over dated versions and, among equals, the id that sorts last (the newest). A pattern that
matches nothing as a whole may end in ``:LEVEL`` (a thinking level), split off at the last colon
— ids may hold colons themselves (OpenRouter's ``:free``), so the whole pattern is tried first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from knightcode._llm.types import Model
from knightcode._types.messages import ThinkingLevel, thinking_level_of

_DATED = re.compile(r"-\d{8}$")


@dataclass(frozen=True, slots=True)
class PatternMatch:
    """What a pattern names: the model and the thinking level its ``:level`` suffix asks for."""

    model: Model
    thinking: ThinkingLevel | None = None


def is_alias(model_id: str) -> bool:
    """Whether ``model_id`` is a moving alias rather than a dated snapshot."""
    return model_id.endswith("-latest") or _DATED.search(model_id) is None


def match_model(pattern: str, models: Sequence[Model]) -> Model | None:
    """The model ``pattern`` names among ``models`` (no ``:level`` handling), or None."""
    wanted = pattern.casefold()
    head, slash, rest = wanted.partition("/")
    if slash:
        for model in models:
            if model.provider.casefold() == head and model.id.casefold() == rest:
                return model
    for model in models:
        if model.id.casefold() == wanted:
            return model
    matches = [
        model
        for model in models
        if wanted in model.id.casefold() or wanted in model.name.casefold()
    ]
    if not matches:
        return None
    aliases = [model for model in matches if is_alias(model.id)]
    return max(aliases or matches, key=lambda model: model.id)


def parse_model_pattern(pattern: str, models: Sequence[Model]) -> PatternMatch | None:
    """``pattern`` with an optional ``:level`` suffix, or None when it names no model (an
    unknown level names none either: ``--model x:loud`` is a mistake, not a request for ``x``).
    """
    found = match_model(pattern, models)
    if found is not None:
        return PatternMatch(found)
    prefix, colon, suffix = pattern.rpartition(":")
    level = thinking_level_of(suffix)
    if not colon or level is None:
        return None
    inner = parse_model_pattern(prefix, models)
    return PatternMatch(inner.model, level) if inner is not None else None
