"""The level a model switch lands on and the reference's clamp, on real :class:`Model` values."""

from __future__ import annotations

import pytest

from knightcode._agent.thinking_switch import (
    clamp_thinking_level,
    level_for_model_switch,
    supported_thinking_levels,
)
from knightcode._llm.types import Model
from knightcode._types.messages import ThinkingLevel


def _model(reasoning: bool = True, **levels: str | None) -> Model:
    return Model(
        "p",
        "m",
        "m",
        "openai-completions",
        "http://x",
        reasoning=reasoning,
        thinking_level_map=levels,
    )


def test_supported_levels() -> None:
    assert supported_thinking_levels(_model(reasoning=False)) == ("off",)
    assert supported_thinking_levels(_model()) == ("off", "minimal", "low", "medium", "high")
    assert supported_thinking_levels(_model(xhigh="xhigh", minimal=None)) == (
        "off",
        "low",
        "medium",
        "high",
        "xhigh",
    )


@pytest.mark.parametrize(
    ("model", "level", "expected"),
    [
        (_model(reasoning=False), "high", "off"),
        (_model(), "xhigh", "high"),  # no xhigh without the map naming it: the nearest below
        (_model(xhigh="xhigh"), "xhigh", "xhigh"),
        (_model(max="max"), "xhigh", "max"),  # the nearest above first
        (_model(low=None), "low", "medium"),
        (_model(), "medium", "medium"),
    ],
)
def test_clamp(model: Model, level: ThinkingLevel, expected: ThinkingLevel) -> None:
    assert clamp_thinking_level(model, level) == expected


def test_the_switch_order() -> None:
    target = _model()
    per_model = {"p/m": "low", "p/other": "high"}
    assert level_for_model_switch(target, "high", explicit="minimal", per_model=per_model) == (
        "minimal"
    )
    assert level_for_model_switch(target, "high", default_level="medium", per_model=per_model) == (
        "low"
    )
    assert level_for_model_switch(target, "high", default_level="minimal") == "minimal"
    assert level_for_model_switch(target, "high") == "high"  # no setting: the current level
    assert level_for_model_switch(_model(reasoning=False), "high") == "off"


def test_cycling_skips_levels_the_model_lacks() -> None:
    from knightcode._agent.thinking_switch import next_thinking_level

    assert next_thinking_level(_model(), "off") == "minimal"
    assert next_thinking_level(_model(), "high") == "off"
    lacking = _model(medium=None, high=None)  # off, minimal, low
    assert next_thinking_level(lacking, "low") == "off"  # never stuck on a clamped level
    assert next_thinking_level(_model(reasoning=False), "off") == "off"
