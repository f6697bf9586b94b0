"""When to compact: the answer to ``session_check_compaction`` for each trigger.

* ``manual`` (``/compact``, RPC ``compact``) always compacts; a failure is reported, not papered
  over, and a success closes the circuit breaker.
* ``before_prompt``, ``between_turns``, ``after_run``: compact when automatic compaction is on
  and ``contextTokens > contextWindow - reserveTokens``, where ``contextTokens`` is the context
  the model sees now (the projection: last valid usage plus estimates of what followed it). A
  message from before the latest compaction is stale and never triggers; after an error the
  estimate needs a usage newer than that compaction (the reference's rules).
* ``overflow``/``length``: :func:`recover` — at most once per prompt.
* **Circuit breaker.** An automatic compaction that leaves the context above the threshold, or
  frees less than a tenth of it, is low-yield; after three in a row automatic compaction stops
  (with a warning) until a manual compaction succeeds.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

from knightcode import (
    KnightcodeError,
    estimate_context_tokens,
    estimate_tokens,
    is_context_overflow,
)

from .state import BREAKER_LIMIT, AgentState, effective_settings, state_of

if TYPE_CHECKING:
    from knightcode import (
        AgentHandle,
        AssistantMessage,
        CompactionSettings,
        CompactionVerdict,
        HookContext,
        Model,
        NotifyLevel,
        SessionView,
    )

    from .compactor import Outcome

__all__ = ["check", "context_tokens", "recover", "should_compact"]

Trigger = Literal["before_prompt", "between_turns", "after_run", "overflow", "length", "manual"]

_RECOVERY_EXHAUSTED = {
    "overflow": "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model.",
    "length": "Truncated response recovery failed after one compact-and-retry attempt.",
}


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """``contextTokens > contextWindow - reserveTokens``, when automatic compaction is enabled."""
    return settings.enabled and context_tokens > context_window - settings.reserve_tokens


def _epoch_ms(iso: str) -> int:
    try:
        return int(datetime.fromisoformat(iso).timestamp() * 1000)
    except ValueError:
        return 0


def _latest_compaction_ms(session: SessionView) -> int | None:
    for entry in reversed(session.get_branch()):
        if entry["type"] == "compaction":
            return _epoch_ms(entry["timestamp"])
    return None


def _has_tool_calls(message: AssistantMessage) -> bool:
    return any(block["type"] == "toolCall" for block in message["content"])


def context_tokens(agent: AgentHandle, message: AssistantMessage) -> int | None:
    """The context size that decides a threshold compaction, or None when ``message`` must not
    trigger one (stale, or an error without a usable usage).
    """
    compacted_at = _latest_compaction_ms(agent.session)
    if compacted_at is not None and message["timestamp"] <= compacted_at:
        return None
    messages = agent.session.build_context().messages
    estimate = estimate_context_tokens(messages)
    index = estimate.last_usage_index
    stale = (
        index is not None
        and compacted_at is not None
        and messages[index]["timestamp"] <= compacted_at
    )
    if message["stopReason"] == "error" and (index is None or stale):
        return None
    if stale:  # the usage counted the pre-compaction context: estimate every message instead
        return sum(estimate_tokens(m) for m in messages)
    return estimate.tokens


async def check(
    trigger: Trigger,
    message: AssistantMessage | None,
    will_retry: bool,
    custom: str | None,
    ctx: HookContext,
) -> CompactionVerdict | None:
    """Answer one ``session_check_compaction`` call (see the module docstring)."""
    agent = ctx.agent
    if agent is None:
        return None
    state = state_of(agent)
    if trigger == "manual":
        from .compactor import run_compaction

        outcome = await run_compaction(agent, ctx, "manual", custom_instructions=custom)
        if outcome.compacted:
            state.low_yield_streak, state.breaker_open = 0, False
        return outcome.verdict()
    if trigger in ("overflow", "length"):
        return await recover(agent, ctx, trigger, message, will_retry, state)
    if trigger == "before_prompt":
        state.recovery_attempted, state.recovery_trigger = False, None
    if not agent.auto_compaction_enabled or message is None:
        return None
    if trigger == "after_run" and state.recovery_attempted and _failed_again(agent, message):
        agent.publish(
            {
                "type": "compaction_end",
                "reason": "overflow",
                "aborted": False,
                "willRetry": False,
                "errorMessage": _RECOVERY_EXHAUSTED[state.recovery_trigger or "overflow"],
            }
        )
        return None
    if message["stopReason"] == "aborted" and trigger != "before_prompt":
        return None
    try:
        settings = effective_settings(ctx, agent, agent.model)
    except KnightcodeError as error:  # a settings mistake: say so, and do not compact
        _notify(ctx, f"compaction: {error}", "warning")
        return None
    tokens = context_tokens(agent, message)
    if tokens is None or not should_compact(tokens, agent.model.context_window, settings):
        return None
    if state.breaker_open:
        return None
    from .compactor import run_compaction  # the machinery, only once compaction is due

    outcome = await run_compaction(agent, ctx, "threshold", allow_fallback=True)
    _count_yield(agent, ctx, state, outcome, settings)
    return outcome.verdict()


def _failed_again(agent: AgentHandle, message: AssistantMessage) -> bool:
    """Whether the run ended with a second overflow or early length stop after recovery."""
    if message["stopReason"] == "error":
        return is_context_overflow(message)
    # (A silent overflow is left to the threshold check: its answer is fine.)
    return (
        message["stopReason"] == "length"
        and not _has_tool_calls(message)
        and _early_length(message, agent.model)
    )


async def recover(
    agent: AgentHandle,
    ctx: HookContext,
    trigger: Literal["overflow", "length"],
    message: AssistantMessage | None,
    will_retry: bool,
    state: AgentState,
) -> CompactionVerdict | None:
    """Overflow or early ``length`` stop: hide the failed attempt from the model with a
    ``context_edit`` omission, compact, and ask for one retry. A compaction that fails or is
    cancelled keeps the omission and asks for no retry.
    """
    if not agent.auto_compaction_enabled or message is None:
        return None
    model = agent.model
    if (message["provider"], message["model"]) != (model.provider, model.id):
        return None  # an overflow of another model says nothing about this one's window
    if trigger == "length" and not _early_length(message, model):
        return None  # the answer used the model's whole output limit: compacting cannot help
    state.recovery_attempted, state.recovery_trigger = True, trigger
    from .compactor import run_compaction

    if message["stopReason"] == "stop":
        # A silent overflow (more input reported than the window holds): the answer itself is
        # fine, so it stays and is not asked again; the context is compacted for what follows.
        outcome = await run_compaction(agent, ctx, "overflow", allow_fallback=True)
        return outcome.verdict()
    branch = agent.session.get_branch()
    failed = next(
        (e for e in reversed(branch) if e["type"] == "message" and e["message"] is message), None
    ) or next(
        (e for e in reversed(branch) if e["type"] == "message" and e["message"] == message), None
    )
    if failed is not None:
        agent.append_context_edit(
            [{"op": "omit", "targetId": failed["id"]}], reason=f"{trigger}_recovery"
        )
    outcome = await run_compaction(
        agent, ctx, "overflow", will_retry=will_retry, allow_fallback=True
    )
    if outcome.compacted:
        _count_yield(agent, ctx, state, outcome, effective_settings(ctx, agent, model))
        return outcome.verdict(retry=will_retry)
    return outcome.verdict()


def _early_length(message: AssistantMessage, model: Model) -> bool:
    """Whether a ``length`` stop came before the model's output limit (the context ran out)."""
    return message["usage"]["output"] < model.max_tokens


def _notify(ctx: HookContext, text: str, level: NotifyLevel) -> None:
    ctx.ui.notify(text, level)


def _count_yield(
    agent: AgentHandle,
    ctx: HookContext,
    state: AgentState,
    outcome: Outcome,
    settings: CompactionSettings,
) -> None:
    """Track low-yield automatic compactions and open the breaker after too many."""
    if not outcome.compacted or outcome.result is None:
        return
    before = outcome.result["tokensBefore"]
    after = outcome.result["estimatedTokensAfter"]
    limit = agent.model.context_window - settings.reserve_tokens
    low = after > limit or before - after < before // 10
    state.low_yield_streak = state.low_yield_streak + 1 if low else 0
    if state.low_yield_streak >= BREAKER_LIMIT and not state.breaker_open:
        state.breaker_open = True
        _notify(
            ctx,
            f"Automatic compaction is paused: the last {BREAKER_LIMIT} compactions freed too "
            f"little context (now about {after} tokens, threshold {limit}). Run /compact to "
            "compact by hand, start a new session, or switch to a model with a larger context "
            "window.",
            "warning",
        )
