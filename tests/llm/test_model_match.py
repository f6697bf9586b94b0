"""The reference's ``--model`` pattern rules, on plain model lists."""

from __future__ import annotations

from knightcode._llm.model_match import is_alias, match_model, parse_model_pattern
from knightcode._llm.types import Model


def _model(provider: str, model_id: str, name: str = "") -> Model:
    return Model(provider=provider, id=model_id, name=name or model_id, api="x", base_url="")


MODELS = [
    _model("openrouter", "qwen/qwen3:free"),
    _model("anthropic", "claude-opus-4-20250514"),
    _model("anthropic", "claude-opus-4-1-20250805"),
    _model("openai", "gpt-5-latest", name="GPT Five"),
]


def test_alias_is_latest_or_undated() -> None:
    assert is_alias("gpt-5-latest") and is_alias("claude-opus-4")
    assert not is_alias("claude-opus-4-20250514")


def test_ids_with_colons_match_whole_before_a_level_is_split_off() -> None:
    found = parse_model_pattern("qwen/qwen3:free", MODELS)
    assert found is not None and (found.model.id, found.thinking) == ("qwen/qwen3:free", None)
    found = parse_model_pattern("qwen3:free:high", MODELS)
    assert found is not None and (found.model.id, found.thinking) == ("qwen/qwen3:free", "high")


def test_names_match_and_the_dated_id_sorting_last_wins() -> None:
    found = match_model("five", MODELS)
    assert found is not None and found.id == "gpt-5-latest"
    found = match_model("anthropic/opus", MODELS)  # no exact provider/id: partial over all
    assert found is None
    found = match_model("opus", MODELS)
    assert found is not None and found.id == "claude-opus-4-20250514"
    assert parse_model_pattern("opus:loud", MODELS) is None
