"""Decision models through ``/v1/systemone``, against the current llama.cpp (0.6) built by
``.ci/run``. tiny-decision is an ``openjev`` model whose answer labels A, B, C carry .6, .3, .1.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from knightcode._errors import UsageError
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

QUESTIONS = {
    "route": ChoiceQuestion(
        "Which team?", {"billing": "money matters", "shipping": None, "technical": None}
    ),
    "angry": BoolQuestion("Is the customer angry?", true="shouting or insulting"),
    "urgency": ScoreQuestion("How urgent?", ["low", "medium", "high"]),
}
STATE = {"ticket": "Where is my refund?", "history": ["opened", "escalated"]}


async def test_decision_models_are_classifiers_only(
    systemone_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    harness = make_harness(systemone_router.url, KEY)
    await harness.registry.refresh_models()
    assert harness.registry.discovery_errors == {}
    classifiers = {(m.id, m.api) for m in harness.registry.classifiers}
    assert classifiers == {
        ("tiny-decision", "typesafe-system-one"),
        ("tiny-chat", "llama-cpp-classify"),
    }
    ready = {m.id for m in harness.registry.available() if m.provider == "llama.cpp"}
    assert ready == {"tiny-chat"}
    assert "tiny-decision" not in {m.id for m in harness.registry.models}
    with pytest.raises(UsageError, match="it is a decision model: it answers only as a classifier"):
        await harness.registry.resolve("llama.cpp/tiny-decision")


async def test_classify_through_systemone(
    systemone_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    harness = make_harness(systemone_router.url, KEY)
    result = await harness.registry.classify("llama.cpp/tiny-decision", STATE, QUESTIONS)
    assert result.model.api == "typesafe-system-one"
    route, angry, urgency = (result.answers[q] for q in QUESTIONS)
    assert isinstance(route, ChoiceAnswer) and route.choice == "billing"
    assert {k: round(v, 3) for k, v in route.probabilities.items()} == {
        "billing": 0.6,
        "shipping": 0.3,
        "technical": 0.1,
    }
    assert round(route.confidence, 3) == 0.4
    assert isinstance(angry, BoolAnswer)
    assert (angry.value, round(angry.probability, 3)) == (True, 0.667)
    assert isinstance(urgency, ScoreAnswer)
    assert tuple(round(p, 3) for p in urgency.probabilities) == (0.6, 0.3, 0.1)
    assert (round(urgency.score, 3), urgency.level, round(urgency.confidence, 3)) == (0.5, 0, 0.25)
    assert result.input_tokens is not None and result.input_tokens > 0


async def test_temperature_softens_the_models_answer(
    systemone_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    harness = make_harness(systemone_router.url, KEY)
    result = await harness.registry.classify(
        "llama.cpp/tiny-decision", "a string state", {"route": QUESTIONS["route"]}, temperature=2.0
    )
    answer = result.answers["route"]
    assert isinstance(answer, ChoiceAnswer) and answer.choice == "billing"
    roots = [p**0.5 for p in (0.6, 0.3, 0.1)]
    assert [round(p, 3) for p in answer.probabilities.values()] == [
        round(r / sum(roots), 3) for r in roots
    ]


async def test_chat_model_probabilities_on_the_current_build(
    systemone_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    harness = make_harness(systemone_router.url, KEY)
    result = await harness.registry.classify(
        "llama.cpp/tiny-chat", STATE, {"angry": QUESTIONS["angry"]}
    )
    answer = result.answers["angry"]
    assert isinstance(answer, BoolAnswer) and round(answer.probability, 3) == 0.8


async def test_systemone_refuses_a_chat_model(
    systemone_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    harness = make_harness(systemone_router.url, KEY)
    chat = await harness.registry.find_classifier(
        "llama.cpp", "tiny-chat"
    )  # asks the router itself
    assert chat is not None
    wrong = dataclasses.replace(chat, api="typesafe-system-one")
    with pytest.raises(ClassificationError, match="'tiny-chat' is not a decision model"):
        await harness.registry.classify(wrong, STATE, QUESTIONS)


async def test_older_build_without_systemone(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-decision"})
    harness = make_harness(router.url, KEY)
    await harness.registry.refresh_models()
    # b10434 does not mark decision models: it is a chat model and chat classifier there
    (listed,) = [m for m in harness.registry.classifiers if m.id == "tiny-decision"]
    assert listed.api == "llama-cpp-classify"
    as_decision = dataclasses.replace(listed, api="typesafe-system-one")
    with pytest.raises(
        ClassificationError, match=r"has no /v1/systemone: decision models need llama\.cpp 0\.6\.0"
    ):
        await harness.registry.classify(as_decision, STATE, QUESTIONS)
