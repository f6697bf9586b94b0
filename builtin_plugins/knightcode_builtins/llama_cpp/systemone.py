"""Decision models (Julia-1, Laya, Kev, lev, OpenJev …) through ``POST /v1/systemone``.

The router proxies the request to the model, which reads its answer from label logits at the
end of its own ``systemone`` prompt template and returns calibrated probabilities. The whole
request (every question) is one call; the server shares the state's prefix between questions
itself. Answers are converted to knightcode's typed answers, with the request's ``temperature``
applied on top of the model's own calibration (1 leaves them unchanged).
"""

from __future__ import annotations

from collections.abc import Mapping

from knightcode import (
    Answer,
    BoolQuestion,
    ChoiceQuestion,
    Classification,
    ClassificationError,
    ClassifyRequest,
    Model,
    Question,
    ScoreQuestion,
    answer_from_probabilities,
)
from knightcode_builtins.llama_cpp.errors import RouterError
from knightcode_builtins.llama_cpp.router import RouterClient

__all__ = ["classify_with_decision_model", "systemone_question"]


def systemone_question(question: Question) -> dict[str, object]:
    """A question in the System One API's shape (``bool`` is called ``noul`` there)."""
    if isinstance(question, ChoiceQuestion):
        return {
            "type": "choice",
            "instructions": question.instructions,
            "criteria": dict(question.options),
        }
    if isinstance(question, BoolQuestion):
        criteria = {
            key: text for key, text in (("true", question.true), ("false", question.false)) if text
        }
        return {"type": "noul", "instructions": question.instructions, "criteria": criteria or None}
    return {
        "type": "score",
        "instructions": question.instructions,
        "criteria": list(question.levels),
    }


async def classify_with_decision_model(
    client: RouterClient, model: Model, request: ClassifyRequest
) -> Classification:
    """Answer ``request`` with one ``/v1/systemone`` call.

    :raises ClassificationError: the build has no ``/v1/systemone`` (404), the model is not a
        decision model (501), or the router rejected the request
    """
    body: dict[str, object] = {
        "model": model.id,
        "state": request.state,
        "questions": {qid: systemone_question(q) for qid, q in request.questions.items()},
    }
    try:
        reply = await client.systemone(body)
    except RouterError as exc:
        if exc.status == 404 and exc.detail == "File Not Found":
            raise ClassificationError(
                f"The llama.cpp router at {client.url} has no /v1/systemone: decision models "
                "need llama.cpp 0.6.0 or later. Update llama-server."
            ) from None
        if exc.status == 501:
            raise ClassificationError(
                f"llama.cpp model {model.id!r} is not a decision model ({exc.detail})"
            ) from None
        raise
    raw = reply.get("answers")
    if not isinstance(raw, Mapping):
        raise ClassificationError(f"/v1/systemone answered without answers: {reply!r:.200}")
    answers = {
        qid: _answer(qid, question, raw.get(qid), request.temperature)
        for qid, question in request.questions.items()
    }
    usage = reply.get("usage") or {}
    tokens = usage.get("input_tokens") if isinstance(usage, Mapping) else None
    return Classification(model, answers, tokens if isinstance(tokens, int) else None)


def _answer(qid: str, question: Question, raw: object, temperature: float) -> Answer:
    if not isinstance(raw, Mapping):
        raise ClassificationError(f"/v1/systemone gave no answer to question {qid!r}")
    if isinstance(question, BoolQuestion):
        yes = float(raw.get("noul", 0.0))
        return answer_from_probabilities(question, [yes, 1.0 - yes], temperature)
    probabilities = raw.get("probabilities") or {}
    keys = (
        list(question.options)
        if isinstance(question, ChoiceQuestion)
        else [str(level) for level in range(len(question.levels))]
    )
    assert isinstance(question, (ChoiceQuestion, ScoreQuestion))
    values = [float(probabilities.get(key, 0.0)) for key in keys]
    return answer_from_probabilities(question, values, temperature)
