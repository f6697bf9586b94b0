"""The gate's judgement: ask the classifier, decide by threshold, ask the user, keep a record.

One judgement covers one tool call or one tool result. Its text goes to the classifier in one or
more parts (a long page is classified in chunks; the highest P(yes) of each question counts), the
questions are yes/no questions whose "yes" means danger, and the decision is

* **allow** — every P(yes) is below ``thresholds.allow``;
* **block** — one is above ``thresholds.block``;
* **ask** — otherwise: the user confirms (``ctx.ui.confirm``) or not; with nobody to ask (print
  and JSON modes) that is a block.

Anything that stops the classifier from answering — no classifier set, an unknown one, a router
that is down, a timeout — is a block that says which classifier failed and what to do: the gate
fails closed. Every judgement is appended to the session as a ``web-tools.gate`` custom entry and
shown as a notice; neither holds the judged text, only a short redacted excerpt.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from knightcode import HookContext, NotifyLevel

    from .gate_config import GateConfig

__all__ = ["CUSTOM_TYPE", "Judged", "Question", "Subject", "judge", "report"]

CUSTOM_TYPE = "web-tools.gate"
"""The ``customType`` of the gate's session entries."""

Decision = Literal["allow", "ask", "block"]
Outcome = Literal["allowed", "denied", "blocked"]
_LEVELS: dict[Outcome, NotifyLevel] = {"allowed": "info", "denied": "warning", "blocked": "warning"}


@dataclass(frozen=True)
class Question:
    """One yes/no question; ``match`` is the pattern that selected it (tool calls only)."""

    id: str
    text: str
    match: str | None = None


@dataclass(frozen=True)
class Subject:
    """What is judged.

    :param kind: ``call`` (before a tool runs) or ``content`` (a result, before the context)
    :param tool: the tool's name
    :param tool_call_id: the call
    :param states: what the classifier is given, one request each
    :param excerpt: a short redacted excerpt for records, notices and dialogs
    """

    kind: Literal["call", "content"]
    tool: str
    tool_call_id: str
    states: Sequence[object]
    excerpt: str


@dataclass(frozen=True)
class Judged:
    """A judgement: ``allowed`` or not, and the ``reason`` (for a block, the text the model
    sees), with the probabilities it rests on.
    """

    decision: Decision
    outcome: Outcome
    reason: str
    probabilities: Mapping[str, float]
    parts: int
    ms: int

    @property
    def allowed(self) -> bool:
        """Whether the call runs, or the content enters the context."""
        return self.outcome == "allowed"


class _Failed(Exception):
    """The classifier did not answer; the message says why."""


async def judge(
    gate: GateConfig,
    subject: Subject,
    questions: Sequence[Question],
    ctx: HookContext,
    *,
    refused: str | None = None,
) -> Judged:
    """Classify ``subject``, decide, and ask the user when unsure (see :func:`report`).

    :param refused: block without asking the classifier, for this reason
    """
    started = time.monotonic()
    probabilities: dict[str, float] = {}
    parts = 0
    decision: Decision = "block"
    outcome: Outcome = "blocked"
    if refused is not None:
        reason = refused
    else:
        try:
            parts = await _classify(gate, subject, questions, ctx, probabilities)
        except _Failed as failure:
            reason = _failure_reason(gate, str(failure))
        else:
            decision, outcome, reason = await _decide(gate, subject, questions, probabilities, ctx)
    ms = round((time.monotonic() - started) * 1000)
    return Judged(decision, outcome, reason, probabilities, parts, ms)


def report(
    ctx: HookContext,
    gate: GateConfig,
    subject: Subject,
    questions: Sequence[Question],
    judged: Judged,
    extra: Mapping[str, object] | None = None,
) -> None:
    """Append the judgement to the session as a ``web-tools.gate`` entry, and show it: in the
    transcript (or the RPC client) always, on stderr in print and JSON modes only when something
    was stopped. Neither holds the judged text, only the subject's redacted excerpt.

    :param extra: more fields for the entry (sizes, what happened to a scratchpad file …)
    """
    from knightcode import NoSessionError

    record: dict[str, object] = {
        "kind": subject.kind,
        "tool": subject.tool,
        "toolCallId": subject.tool_call_id,
        "excerpt": subject.excerpt,
        "classifier": gate.classifier,
        "questions": [
            {
                "id": q.id,
                "question": q.text,
                **({"match": q.match} if q.match is not None else {}),
                "pYes": _rounded(judged.probabilities.get(q.id)),
            }
            for q in questions
        ],
        "parts": judged.parts,
        "thresholds": {"allow": gate.allow_below, "block": gate.block_above},
        "decision": judged.decision,
        "outcome": judged.outcome,
        "reason": judged.reason,
        "ms": judged.ms,
        **(extra or {}),
    }
    with contextlib.suppress(NoSessionError):
        ctx.append_entry(CUSTOM_TYPE, record)
    if ctx.has_ui or not judged.allowed:
        what = subject.tool if subject.kind == "call" else f"{subject.tool} result"
        notice = f"Gate {judged.outcome} {what} — {judged.reason} · {subject.excerpt}"
        ctx.ui.notify(notice, _LEVELS[judged.outcome])


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


async def _classify(
    gate: GateConfig,
    subject: Subject,
    questions: Sequence[Question],
    ctx: HookContext,
    probabilities: dict[str, float],
) -> int:
    """Fill ``probabilities`` with each question's highest P(yes) over the parts; stop early
    once one is above the block threshold. Returns the parts classified.

    :raises _Failed: no classifier, or it failed or took too long
    """
    from knightcode import BoolAnswer, BoolQuestion

    registry = ctx.model_registry
    if not gate.classifier:
        raise _Failed("gate.classifier is not set in tools.json")
    if registry is None:
        raise _Failed("no model registry (knightcode is not running a session)")
    asked = {q.id: BoolQuestion(q.text) for q in questions}
    parts = 0
    try:
        async with asyncio.timeout(_time_limit(gate, ctx)):
            for state in subject.states:
                result = await registry.classify(
                    gate.classifier,
                    state,
                    asked,
                    temperature=gate.temperature,
                    signal=ctx.signal,
                )
                parts += 1
                for qid, answer in result.answers.items():
                    if not isinstance(answer, BoolAnswer):
                        raise _Failed(f"answered question {qid!r} with a {answer.type}, not yes/no")
                    probabilities[qid] = max(probabilities.get(qid, 0.0), answer.probability)
                if max(probabilities.values(), default=0.0) > gate.block_above:
                    break  # blocked whatever the other parts say
        if not probabilities:
            raise _Failed("it gave no answers")
    except TimeoutError:
        raise _Failed(f"no answer within {_time_limit(gate, ctx):g} s (gate.timeout)") from None
    except _Failed:
        raise
    except Exception as exc:  # any failure to answer blocks; the message says which
        raise _Failed(str(exc) or type(exc).__name__) from None
    return parts


def _time_limit(gate: GateConfig, ctx: HookContext) -> float:
    """``gate.timeout``, within the hook deadline (``hookTimeoutMs``): a tool_result handler
    that misses it would be skipped and the content would pass unjudged.
    """
    hook_ms = ctx.settings.get("hookTimeoutMs", 60_000)
    if isinstance(hook_ms, (int, float)) and not isinstance(hook_ms, bool) and hook_ms > 0:
        return min(gate.timeout, hook_ms / 1000 * 0.8)
    return gate.timeout


async def _decide(
    gate: GateConfig,
    subject: Subject,
    questions: Sequence[Question],
    probabilities: Mapping[str, float],
    ctx: HookContext,
) -> tuple[Decision, Outcome, str]:
    top_id = max(probabilities, key=lambda qid: probabilities[qid])
    top = probabilities[top_id]
    scores = ", ".join(f"{q.id} P(yes)={probabilities.get(q.id, 0.0):.2f}" for q in questions)
    where = f"classifier {gate.classifier}: {scores}"
    if top > gate.block_above:
        return "block", "blocked", f"{where}, above the block threshold {gate.block_above:g}"
    if top < gate.allow_below:
        return "allow", "allowed", f"{where}, below the allow threshold {gate.allow_below:g}"
    between = f"between the thresholds {gate.allow_below:g} and {gate.block_above:g}"
    if not ctx.has_ui:
        return (
            "ask",
            "blocked",
            f"{where}, {between}; nobody can be asked here (no UI: print or JSON mode), so "
            "the gate fails closed. Run interactively or in RPC mode to be asked, or change "
            "gate.thresholds in tools.json",
        )
    title = (
        f"Allow {subject.tool}?"
        if subject.kind == "call"
        else f"Let this {subject.tool} result into the context?"
    )
    lines = [f"The classifier {gate.classifier} is unsure ({between}):"]
    lines += [f"• {q.text} — yes {probabilities.get(q.id, 0.0):.2f}" for q in questions]
    lines.append(subject.excerpt)
    yes = await ctx.ui.confirm(title, "\n".join(lines), timeout=gate.ask_timeout)
    answer = "the user allowed it" if yes else "the user said no (or did not answer)"
    return "ask", "allowed" if yes else "denied", f"{where}, {between}; {answer}"


def _failure_reason(gate: GateConfig, why: str) -> str:
    name = gate.classifier or "(none)"
    if "context" in why:  # the classifier's context is too small for the text
        fix = "lower gate.chunkChars in tools.json, or give the classifier a larger context"
    else:
        fix = "load the classifier (e.g. /llama) or fix gate.classifier in tools.json"
    return (
        f"the classifier {name} could not answer: {why}. The gate fails closed: {fix}, or set "
        "gate.enabled to false"
    )
