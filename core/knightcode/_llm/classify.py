"""Classifiers: typed questions about a state, answered with probabilities instead of text.

A classifier model does not chat. It is given a *state* (any JSON value: a string, an object, a
list) and named questions of three kinds, and answers each with a probability distribution:

* :class:`ChoiceQuestion` — one of several options (keys, each with an optional description);
  the answer is a :class:`ChoiceAnswer` with every option's probability and a confidence of
  ``(n * peak - 1) / (n - 1)`` (0 for a uniform distribution, 1 for a certain one);
* :class:`BoolQuestion` — yes or no; a :class:`BoolAnswer` carries P(yes);
* :class:`ScoreQuestion` — a level on a scale of 2 to 10 described levels, lowest first; a
  :class:`ScoreAnswer` carries the expected level (0 = the lowest) and each level's probability.

Plugins call :meth:`knightcode._llm.registry.ModelRegistry.classify` (``ctx.model_registry``),
which hands a :class:`ClassifyRequest` to the provider serving the classifier model. Providers
turn per-label probabilities into answers with :func:`answer_from_probabilities`, so every
classifier reports the same shapes and confidence formulas (TypeSafe's published ones).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from knightcode._abort import AbortSignal
from knightcode._errors import KnightcodeError

if TYPE_CHECKING:
    from knightcode._llm.types import Model

__all__ = [
    "MAX_CHOICE_OPTIONS",
    "MAX_SCORE_LEVELS",
    "Answer",
    "BoolAnswer",
    "BoolQuestion",
    "ChoiceAnswer",
    "ChoiceQuestion",
    "Classification",
    "ClassificationError",
    "ClassifyRequest",
    "Question",
    "ScoreAnswer",
    "ScoreQuestion",
    "answer_from_probabilities",
    "choice_confidence",
    "parse_questions",
    "score_confidence",
    "soften",
]

MAX_CHOICE_OPTIONS = 62
"""Letters a-z, A-Z and digits: the most options a single-token label scheme can name."""
MAX_SCORE_LEVELS = 10
"""Digits 0-9."""


class ClassificationError(KnightcodeError):
    """A classification could not be done; the message says why and what to change."""


@dataclass(frozen=True)
class ChoiceQuestion:
    """Pick one option.

    :param instructions: the question, e.g. ``"Which team should handle this ticket?"``
    :param options: option key -> description (None when the key says it all), in order
    """

    instructions: str
    options: Mapping[str, str | None]
    type: Literal["choice"] = field(default="choice", init=False)


@dataclass(frozen=True)
class BoolQuestion:
    """Answer yes or no.

    :param instructions: the question, e.g. ``"Is the customer angry?"``
    :param true: what a yes means, when the question alone is ambiguous
    :param false: what a no means
    """

    instructions: str
    true: str | None = None
    false: str | None = None
    type: Literal["bool"] = field(default="bool", init=False)


@dataclass(frozen=True)
class ScoreQuestion:
    """Rate on a scale.

    :param instructions: the question, e.g. ``"How urgent is this?"``
    :param levels: 2 to 10 level descriptions, lowest first (``["low", "medium", "high"]``)
    """

    instructions: str
    levels: Sequence[str]
    type: Literal["score"] = field(default="score", init=False)


Question = ChoiceQuestion | BoolQuestion | ScoreQuestion


@dataclass(frozen=True)
class ChoiceAnswer:
    """:param choice: the most likely option key
    :param probabilities: option key -> probability (they sum to 1)
    :param confidence: ``(n * peak - 1) / (n - 1)``
    """

    choice: str
    probabilities: Mapping[str, float]
    confidence: float
    type: Literal["choice"] = field(default="choice", init=False)


@dataclass(frozen=True)
class BoolAnswer:
    """:param value: whether yes is at least as likely as no
    :param probability: P(yes)
    :param confidence: ``|2 * P(yes) - 1|``, the choice confidence of two options
    """

    value: bool
    probability: float
    confidence: float
    type: Literal["bool"] = field(default="bool", init=False)


@dataclass(frozen=True)
class ScoreAnswer:
    """:param score: the expected level, 0 = the lowest (a float: ``sum(i * p_i)``)
    :param level: the most likely level
    :param probabilities: the probability of each level, lowest first
    :param confidence: 1 - the mean distance to the most likely level, relative to that of a
        uniform distribution (TypeSafe's score confidence)
    """

    score: float
    level: int
    probabilities: tuple[float, ...]
    confidence: float
    type: Literal["score"] = field(default="score", init=False)


Answer = ChoiceAnswer | BoolAnswer | ScoreAnswer


@dataclass(frozen=True)
class ClassifyRequest:
    """What a provider's ``classify`` function receives.

    :param state: the JSON value the questions are about
    :param questions: question id -> question, in the order they are asked
    :param temperature: divides the label logits before normalising; above 1 softens
        overconfident distributions (it never changes which answer is most likely)
    :param signal: set it to abort between questions
    """

    state: object
    questions: Mapping[str, Question]
    temperature: float = 1.0
    signal: AbortSignal | None = None


@dataclass(frozen=True)
class Classification:
    """The answers of one request.

    :param model: the classifier model that answered
    :param answers: question id -> answer, in the order of the request
    :param input_tokens: prompt tokens the provider evaluated, when it says (cache hits
        excluded where the provider reports them)
    """

    model: Model
    answers: Mapping[str, Answer]
    input_tokens: int | None = None


def parse_questions(raw: Mapping[str, object]) -> dict[str, Question]:
    """Questions from typed objects or plain dicts shaped like TypeSafe's API.

    A dict question is ``{"type": "choice", "instructions": …, "criteria": {key: description}}``,
    ``{"type": "bool", "instructions": …, "criteria": {"true": …, "false": …}}`` (``"noul"`` is
    accepted for ``"bool"``) or ``{"type": "score", "instructions": …, "criteria": [levels]}``.

    :raises ClassificationError: an invalid question, naming its id and the problem
    """
    if not isinstance(raw, Mapping) or not raw:
        raise ClassificationError("questions: expected a non-empty mapping of id -> question")
    parsed: dict[str, Question] = {}
    for qid, question in raw.items():
        if isinstance(question, Mapping):
            question = _from_dict(str(qid), question)
        if not isinstance(question, (ChoiceQuestion, BoolQuestion, ScoreQuestion)):
            raise ClassificationError(f"questions.{qid}: expected a question, got {question!r}")
        _check(str(qid), question)
        parsed[str(qid)] = question
    return parsed


def _from_dict(qid: str, data: Mapping[str, object]) -> Question:
    kind = data.get("type")
    instructions = data.get("instructions")
    criteria = data.get("criteria")
    if not isinstance(instructions, str):
        raise ClassificationError(f"questions.{qid}.instructions: expected a string")
    if kind == "choice":
        if not isinstance(criteria, Mapping):
            raise ClassificationError(f"questions.{qid}.criteria: expected an object of options")
        return ChoiceQuestion(instructions, dict(criteria))
    if kind in ("bool", "noul"):
        criteria = criteria if isinstance(criteria, Mapping) else {}
        return BoolQuestion(instructions, criteria.get("true"), criteria.get("false"))
    if kind == "score":
        if not isinstance(criteria, Sequence) or isinstance(criteria, str):
            raise ClassificationError(f"questions.{qid}.criteria: expected a list of levels")
        return ScoreQuestion(instructions, tuple(str(level) for level in criteria))
    raise ClassificationError(f'questions.{qid}.type: expected "choice", "bool" or "score"')


def _check(qid: str, question: Question) -> None:
    if isinstance(question, ChoiceQuestion):
        count = len(question.options)
        if not 2 <= count <= MAX_CHOICE_OPTIONS:
            raise ClassificationError(
                f"questions.{qid}: a choice needs 2 to {MAX_CHOICE_OPTIONS} options, got {count}"
            )
    elif isinstance(question, ScoreQuestion):
        count = len(question.levels)
        if not 2 <= count <= MAX_SCORE_LEVELS:
            raise ClassificationError(
                f"questions.{qid}: a score needs 2 to {MAX_SCORE_LEVELS} levels, got {count}"
            )


def soften(probabilities: Sequence[float], temperature: float) -> list[float]:
    """Divide the logits (log-probabilities) by ``temperature`` and normalise.

    Zero probabilities stay zero; a distribution with no mass at all raises.

    :raises ClassificationError: every probability is zero, or the temperature is not positive
    """
    if not temperature > 0 or math.isinf(temperature):
        raise ClassificationError(f"temperature must be a positive number, got {temperature!r}")
    logits = [math.log(p) / temperature if p > 0 else -math.inf for p in probabilities]
    peak = max(logits, default=-math.inf)
    if peak == -math.inf:
        raise ClassificationError("the model gave every answer a probability of zero")
    weights = [math.exp(logit - peak) for logit in logits]  # shifted: no overflow
    total = sum(weights)
    return [weight / total for weight in weights]


def choice_confidence(probabilities: Sequence[float]) -> float:
    """``(peak - 1/n) / (1 - 1/n)``, i.e. ``(n * peak - 1) / (n - 1)``, never below 0."""
    n = len(probabilities)
    if n < 2:
        return 1.0
    uniform = 1.0 / n
    return max(0.0, (max(probabilities) - uniform) / (1.0 - uniform))


def score_confidence(probabilities: Sequence[float]) -> float:
    """1 - (mean distance to the mode) / (the same for a uniform distribution), never below 0."""
    n = len(probabilities)
    if n < 2:
        return 1.0
    mode = max(range(n), key=lambda i: probabilities[i])
    distance = sum(p * abs(i - mode) for i, p in enumerate(probabilities))
    uniform = sum(abs(i - (n - 1) / 2) / n for i in range(n))
    return max(0.0, 1.0 - distance / uniform)


def answer_from_probabilities(
    question: Question, probabilities: Sequence[float], temperature: float = 1.0
) -> Answer:
    """The answer for one question from the (unnormalised) probability of each of its labels.

    :param probabilities: one value per option (choice, in option order), per level (score), or
        ``[P(yes), P(no)]`` (bool)
    :param temperature: see :class:`ClassifyRequest`
    :raises ClassificationError: the counts do not match, or no label has any probability
    """
    expected = _label_count(question)
    if len(probabilities) != expected:
        raise ClassificationError(f"expected {expected} probabilities, got {len(probabilities)}")
    probs = soften(probabilities, temperature)
    if isinstance(question, ChoiceQuestion):
        keys = list(question.options)
        best = max(range(len(probs)), key=lambda i: probs[i])
        probabilities_by_key = dict(zip(keys, probs, strict=True))
        return ChoiceAnswer(keys[best], probabilities_by_key, choice_confidence(probs))
    if isinstance(question, BoolQuestion):
        yes = probs[0]
        return BoolAnswer(yes >= 0.5, yes, abs(2 * yes - 1))
    level = max(range(len(probs)), key=lambda i: probs[i])
    score = sum(i * p for i, p in enumerate(probs))
    return ScoreAnswer(score, level, tuple(probs), score_confidence(probs))


def _label_count(question: Question) -> int:
    if isinstance(question, ChoiceQuestion):
        return len(question.options)
    if isinstance(question, BoolQuestion):
        return 2
    return len(question.levels)
