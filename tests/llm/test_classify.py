"""Typed classification questions and answers (``knightcode._llm.classify``), without a server."""

from __future__ import annotations

import math

import pytest

from knightcode._llm.classify import (
    BoolAnswer,
    BoolQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    ClassificationError,
    ScoreAnswer,
    ScoreQuestion,
    answer_from_probabilities,
    choice_confidence,
    parse_questions,
    score_confidence,
    soften,
)


def test_parse_questions_accepts_objects_and_dicts() -> None:
    parsed = parse_questions(
        {
            "a": ChoiceQuestion("Pick", {"x": None, "y": "why"}),
            "b": {"type": "bool", "instructions": "Yes?", "criteria": {"true": "it is"}},
            "c": {"type": "noul", "instructions": "Maybe?"},
            "d": {"type": "score", "instructions": "How much?", "criteria": ["low", "high"]},
            "e": {"type": "choice", "instructions": "Which?", "criteria": {"p": None, "q": None}},
        }
    )
    assert parsed["b"] == BoolQuestion("Yes?", true="it is")
    assert parsed["c"] == BoolQuestion("Maybe?")
    assert parsed["d"] == ScoreQuestion("How much?", ("low", "high"))
    assert isinstance(parsed["e"], ChoiceQuestion) and list(parsed["e"].options) == ["p", "q"]


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        ({}, "non-empty mapping"),
        (
            {"q": {"type": "rank", "instructions": "?"}},
            'questions.q.type: expected "choice", "bool" or "score"',
        ),
        ({"q": {"type": "choice", "criteria": {}}}, "questions.q.instructions: expected a string"),
        (
            {"q": ChoiceQuestion("?", {k: None for k in map(str, range(63))})},
            "2 to 62 options, got 63",
        ),
        ({"q": ScoreQuestion("?", ["only"])}, "2 to 10 levels, got 1"),
        (
            {"q": {"type": "score", "instructions": "?", "criteria": "low,high"}},
            "expected a list of levels",
        ),
        ({"q": 42}, "expected a question"),
    ],
)
def test_invalid_questions(questions: dict[str, object], message: str) -> None:
    with pytest.raises(ClassificationError, match=message):
        parse_questions(questions)


def test_answers_and_confidences() -> None:
    choice = answer_from_probabilities(
        ChoiceQuestion("?", {"a": None, "b": None, "c": None}), [0.2, 0.1, 0.05]
    )
    assert isinstance(choice, ChoiceAnswer) and choice.choice == "a"
    assert [round(p, 4) for p in choice.probabilities.values()] == [0.5714, 0.2857, 0.1429]
    assert math.isclose(choice.confidence, (3 * 4 / 7 - 1) / 2)
    yes = answer_from_probabilities(BoolQuestion("?"), [0.12, 0.03])
    assert isinstance(yes, BoolAnswer) and yes.value and math.isclose(yes.probability, 0.8)
    assert math.isclose(yes.confidence, 0.6)
    score = answer_from_probabilities(ScoreQuestion("?", ["l", "m", "h"]), [0.6, 0.3, 0.1])
    assert isinstance(score, ScoreAnswer) and score.level == 0
    assert math.isclose(score.score, 0.5) and math.isclose(
        score.confidence, 0.25
    )  # TypeSafe's figures


def test_confidence_bounds() -> None:
    assert choice_confidence([0.25] * 4) == 0.0 and choice_confidence([1.0, 0, 0]) == 1.0
    assert score_confidence([0.2] * 5) < 0.1 and score_confidence([0, 0, 1.0]) == 1.0
    assert choice_confidence([1.0]) == 1.0 == score_confidence([1.0])


def test_temperature_softens_without_changing_the_answer() -> None:
    assert [round(p, 4) for p in soften([0.6, 0.3, 0.1], 1.0)] == [0.6, 0.3, 0.1]
    hot = soften([0.6, 0.3, 0.1], 2.0)
    assert hot[0] == max(hot) and hot[0] < 0.6
    cold = soften([0.6, 0.3, 0.1], 0.5)
    assert cold[0] > 0.6
    assert soften([0.5, 0.0], 3.0) == [1.0, 0.0]  # zero stays zero
    with pytest.raises(ClassificationError, match="probability of zero"):
        soften([0.0, 0.0], 1.0)
    with pytest.raises(ClassificationError, match="temperature must be a positive number"):
        soften([0.5, 0.5], 0.0)
    with pytest.raises(ClassificationError, match="expected 2 probabilities, got 3"):
        answer_from_probabilities(BoolQuestion("?"), [0.1, 0.2, 0.3])
