"""The model scope: the models that model cycling goes through, in every mode (``ctrl+p`` in the
UI, RPC ``cycle_model``), and the first of which a new session starts with when no ``--model``
is given — ``--models PATTERNS`` for one run, else settings ``enabledModels``.

A pattern is read as the reference reads it: one with a glob character (``*``, ``?``, ``[``)
matches ``provider/id`` or the id, case-insensitively, every match in the available models'
order; any other pattern names one model as ``--model`` does (an exact id or ``provider/id``,
else part of an id or name, aliases first: :mod:`knightcode._llm.model_match`).
Either may end in ``:LEVEL``, the thinking level that model is used with.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from knightcode._llm.model_match import PatternMatch, parse_model_pattern
from knightcode._types.messages import thinking_level_of

if TYPE_CHECKING:
    from knightcode._llm.types import Model
    from knightcode._plugins.host import PluginHost

__all__ = ["Scope", "resolve_scope", "scope_patterns", "scoped_models"]

_GLOB = frozenset("*?[")


@dataclass
class Scope:
    """What the patterns name: the models in the patterns' order (no repeats), each with the
    thinking level its pattern asks for, and the patterns that named nothing.
    """

    matches: list[PatternMatch] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[Model]:
        """The scope's models, in order."""
        return [match.model for match in self.matches]


def _glob_matches(pattern: str, available: Sequence[Model]) -> list[PatternMatch]:
    head, colon, suffix = pattern.rpartition(":")
    level = thinking_level_of(suffix) if colon else None
    glob = (head if level is not None else pattern).casefold()
    return [
        PatternMatch(model, level)
        for model in available
        if fnmatch.fnmatchcase(model.ref.casefold(), glob)
        or fnmatch.fnmatchcase(model.id.casefold(), glob)
    ]


def resolve_scope(available: Sequence[Model], patterns: Sequence[str] | None) -> Scope:
    """The scope ``patterns`` name among ``available`` (see the module docstring)."""
    scope = Scope()
    seen: set[tuple[str, str]] = set()
    for raw in patterns or ():
        pattern = raw.strip()
        if not pattern:
            continue
        if _GLOB.intersection(pattern):
            found = _glob_matches(pattern, available)
        else:
            single = parse_model_pattern(pattern, available)
            found = [single] if single is not None else []
        if not found:
            scope.unmatched.append(pattern)
        for match in found:
            key = (match.model.provider, match.model.id)
            if key not in seen:
                seen.add(key)
                scope.matches.append(match)
    return scope


def scoped_models(available: Sequence[Model], patterns: Sequence[str] | None) -> list[Model]:
    """The models of the scope, in the patterns' order. Empty when there are no patterns or none
    matches: the caller then cycles through all.
    """
    return resolve_scope(available, patterns).models


def scope_patterns(host: PluginHost) -> list[str] | None:
    """The patterns in force: this run's ``--models``, else settings ``enabledModels``."""
    if host.model_patterns is not None:
        return host.model_patterns
    if host.context is None:
        return None
    return host.context.settings.model.enabled_models
