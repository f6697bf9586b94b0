"""The start-up model from the model scope: with no ``--model`` and nothing to continue, a new
session starts with the first model ``--models`` (else settings ``enabledModels``) names, as the
reference does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from knightcode._modes.model_scope import resolve_scope

if TYPE_CHECKING:
    from knightcode._llm.model_match import PatternMatch
    from knightcode._llm.registry import ModelRegistry

__all__ = ["first_of_scope"]


async def first_of_scope(
    registry: ModelRegistry, flag: Sequence[str] | None, settings: Sequence[str] | None
) -> PatternMatch | None:
    """The first model of the scope with its level, or None (no patterns, or none matches).

    When no pattern names a usable model, they are tried again after the discovering providers
    (a llama.cpp router) listed theirs. ``--models`` patterns that still name nothing
    are one warning line each on stderr; ``enabledModels`` ones stay quiet (they would warn on
    every start).
    """
    patterns = flag if flag is not None else settings
    if not patterns:
        return None
    scope = resolve_scope(registry.available(), patterns)
    if not scope.matches and registry.discovering_providers:
        await registry.refresh_models()
        scope = resolve_scope(registry.available(), patterns)
    if flag is not None:
        for pattern in scope.unmatched:
            print(
                f"knightcode: warning: --models: no usable model matches {pattern!r}",
                file=sys.stderr,
            )
    return scope.matches[0] if scope.matches else None
