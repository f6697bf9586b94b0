"""Model-scope patterns (``--models``, settings ``enabledModels``) as the reference reads them."""

from __future__ import annotations

from knightcode._llm.types import Model
from knightcode._modes.model_scope import resolve_scope, scoped_models


def _model(provider: str, model_id: str) -> Model:
    return Model(provider, model_id, model_id, "openai-completions", "http://x")


MODELS = [
    _model("anthropic", "claude-sonnet-4-5-20250929"),
    _model("anthropic", "claude-sonnet-4-5"),
    _model("anthropic", "claude-haiku-4-5"),
    _model("openai", "gpt-5"),
    _model("openai", "gpt-5-mini"),
]


def _refs(patterns: list[str]) -> list[str]:
    return [model.ref for model in scoped_models(MODELS, patterns)]


def test_globs_match_provider_slash_id_or_the_id_without_case() -> None:
    assert _refs(["OpenAI/*"]) == ["openai/gpt-5", "openai/gpt-5-mini"]
    assert _refs(["*HAIKU*"]) == ["anthropic/claude-haiku-4-5"]
    assert _refs(["gpt-5?mini"]) == ["openai/gpt-5-mini"]


def test_other_patterns_name_one_model_like_model_does() -> None:
    # Part of an id: the alias over the dated snapshot.
    assert _refs(["sonnet"]) == ["anthropic/claude-sonnet-4-5"]
    assert _refs(["openai/gpt-5"]) == ["openai/gpt-5"]  # exact, not also gpt-5-mini


def test_levels_order_repeats_and_unmatched_patterns() -> None:
    scope = resolve_scope(MODELS, ["haiku:low", "openai/*:high", "gpt-5", " ", "nothing:high"])
    assert [(m.model.id, m.thinking) for m in scope.matches] == [
        ("claude-haiku-4-5", "low"),
        ("gpt-5", "high"),
        ("gpt-5-mini", "high"),
    ]
    assert scope.unmatched == ["nothing:high"]


def test_no_patterns_no_scope() -> None:
    assert scoped_models(MODELS, None) == [] and scoped_models(MODELS, []) == []
