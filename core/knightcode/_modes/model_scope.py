"""Settings ``enabledModels``: the models that model cycling goes through, in every mode
(``ctrl+p`` in the UI, RPC ``cycle_model``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._llm.types import Model


def _matches(model: Model, pattern: str) -> bool:
    pattern = pattern.strip()
    return fnmatch.fnmatchcase(model.ref, pattern) or fnmatch.fnmatchcase(model.id, pattern)


def scoped_models(available: Sequence[Model], patterns: Sequence[str] | None) -> list[Model]:
    """The models of the scope: those of ``available`` that ``patterns`` match (globs such as
    ``anthropic/*`` or ``gpt-4o``, against ``provider/id`` or the id), in the patterns' order.
    Empty when there are no patterns or none matches: the caller then cycles through all.
    """
    chosen: list[Model] = []
    for pattern in patterns or ():
        for model in available:
            if _matches(model, pattern) and model not in chosen:
                chosen.append(model)
    return chosen
