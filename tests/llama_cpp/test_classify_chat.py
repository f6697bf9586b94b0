"""Chat models as classifiers, against the real router: probabilities read from next-token
log-probabilities match the tiny model's known distribution.

After the chat prompt, tiny-chat's next token is Hello .40, A .20, Yes .12, B .10, C .05, 3 .04,
No .03, 2 .02, 4 .02, 1 .01, 5 .01 — whatever the prompt says. So a 3-option choice (A, B, C)
is .20/.10/.05 normalised, a bool is Yes .12 against No .03, and a 4-level score (0-3) is
~0/.01/.02/.04.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest

from knightcode._llm import (
    BoolAnswer,
    BoolQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    ClassificationError,
    ScoreAnswer,
    ScoreQuestion,
)

from .conftest import KEY, Harness
from .servers import LlamaServer

STATE = {"ticket": "My parcel never arrived and I want my money back", "customer": "Ada"}
QUESTIONS = {
    "route": ChoiceQuestion(
        "Which team handles this?", {"billing": "refunds", "shipping": None, "technical": None}
    ),
    "angry": BoolQuestion("Is the customer angry?"),
    "urgency": ScoreQuestion("How urgent is it?", ["not", "a little", "quite", "very"]),
}


def r3(values: object) -> object:
    if isinstance(values, dict):
        return {k: round(v, 3) for k, v in values.items()}
    return tuple(round(v, 3) for v in values)  # type: ignore[attr-defined]


async def test_probabilities_match_the_known_distribution(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    result = await harness.registry.classify("llama.cpp/tiny-chat", STATE, QUESTIONS)
    assert (result.model.id, result.model.api) == ("tiny-chat", "llama-cpp-classify")
    route, angry, urgency = (result.answers[q] for q in ("route", "angry", "urgency"))
    assert isinstance(route, ChoiceAnswer) and route.choice == "billing"
    assert r3(route.probabilities) == {"billing": 0.571, "shipping": 0.286, "technical": 0.143}
    assert round(route.confidence, 3) == 0.357  # (3 * 4/7 - 1) / 2
    assert isinstance(angry, BoolAnswer) and angry.value is True
    assert (round(angry.probability, 3), round(angry.confidence, 3)) == (0.8, 0.6)
    assert isinstance(urgency, ScoreAnswer)
    assert r3(urgency.probabilities) == (0.0, 0.143, 0.286, 0.571)
    assert (round(urgency.score, 3), urgency.level) == (2.429, 3)
    assert round(urgency.confidence, 3) == 0.429
    assert list(result.answers) == ["route", "angry", "urgency"]


async def test_temperature_divides_the_label_logits(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    question = {
        "route": {
            "type": "choice",
            "instructions": "Which team?",
            "criteria": {"a": None, "b": None, "c": None},
        }
    }
    result = await harness.registry.classify(
        "llama.cpp/tiny-chat", "a plain string state", question, temperature=2.0
    )
    answer = result.answers["route"]
    assert isinstance(answer, ChoiceAnswer) and answer.choice == "a"  # never changes the answer
    roots = [math.sqrt(p) for p in (0.2, 0.1, 0.05)]
    expected = {k: round(v / sum(roots), 3) for k, v in zip("abc", roots, strict=True)}
    assert r3(answer.probabilities) == expected == {"a": 0.453, "b": 0.320, "c": 0.227}


async def test_questions_share_the_cached_prefix(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    state = {"log": "x" * 600}  # a long state: the shared prefix dominates each prompt
    one = await harness.registry.classify(
        "llama.cpp/tiny-chat", state, {"angry": QUESTIONS["angry"]}
    )
    first_alone = one.input_tokens
    assert first_alone is not None and first_alone > 1200  # the state appears twice
    many = await harness.registry.classify("llama.cpp/tiny-chat", {"log": "y" * 600}, QUESTIONS)
    # the second and third questions re-use the first one's prefix from the prompt cache
    assert many.input_tokens is not None and many.input_tokens < first_alone * 1.5


async def test_multi_token_label_fails_clearly(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-split"})
    harness = make_harness(router.url, KEY)
    with pytest.raises(ClassificationError) as caught:
        await harness.registry.classify(
            "llama.cpp/tiny-split", STATE, {"angry": QUESTIONS["angry"]}
        )
    assert "the answer label 'Yes' is 3 tokens" in str(caught.value)
    assert "labels must be single tokens" in str(caught.value)
    # letters are single tokens in this vocabulary: a choice still works
    result = await harness.registry.classify(
        "llama.cpp/tiny-split", STATE, {"route": QUESTIONS["route"]}
    )
    assert result.answers["route"].choice == "billing"  # type: ignore[union-attr]


async def test_context_too_small(router: LlamaServer, make_harness: Callable[..., Harness]) -> None:
    router.ensure({"tiny-small-ctx"})
    harness = make_harness(router.url, KEY)
    with pytest.raises(ClassificationError) as caught:
        await harness.registry.classify("llama.cpp/tiny-small-ctx", {"log": "z" * 300}, QUESTIONS)
    message = str(caught.value)
    assert (
        "exceeds the available context size (256 tokens) of llama.cpp model 'tiny-small-ctx'"
        in message
    )
    assert "holds the state twice" in message


async def test_unknown_classifier_and_bad_questions(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    unknown = re.escape("unknown classifier 'llama.cpp/tiny-tools'")
    with pytest.raises(ClassificationError, match=unknown):
        await harness.registry.classify("llama.cpp/tiny-tools", STATE, QUESTIONS)
    with pytest.raises(ClassificationError, match="a choice needs 2 to 62 options, got 1"):
        await harness.registry.classify(
            "llama.cpp/tiny-chat", STATE, {"q": ChoiceQuestion("?", {"only": None})}
        )
    chat_model = harness.registry.find_known("llama.cpp", "tiny-chat")
    assert chat_model is not None
    with pytest.raises(ClassificationError, match="is a chat model"):
        await harness.registry.classify(chat_model, STATE, QUESTIONS)
