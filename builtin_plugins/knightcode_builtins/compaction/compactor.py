"""One compaction, start to finish: events, plugin hooks, the summary, the entry.

``compaction_start`` → prepare (cut point, spans, file lists) → ``session_before_compact`` (a
plugin may cancel or supply the compaction) → the default summary (history, plus the prefix of a
split user-message span) → ``tokensBefore`` recomputed from the context-edited projection →
``CompactionEntry`` appended and the agent's messages rebuilt → ``session_compact`` →
``compaction_end``. Any failure or cancellation ends in ``session_compact_failed`` and a
``compaction_end`` without a result instead, and nothing is appended.

Automatic compactions (``allow_fallback``) never fail because the summarizer does: they fall back
to the deterministic summary of :mod:`.fallback`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knightcode import (
    Aborted,
    Cancel,
    CompactionOverride,
    CompactionVerdict,
    estimate_context_tokens,
)

from .fallback import deterministic_summary
from .file_ops import compute_file_lists, format_file_operations
from .preparation import estimate_messages, prepare_compaction
from .prompts import NO_PRIOR_HISTORY, SPLIT_TURN_SEPARATOR, TURN_PREFIX_PROMPT, merge_split_turn
from .state import effective_settings
from .summarize import Summarizer, cap_left, cap_text

if TYPE_CHECKING:
    from knightcode import (
        AbortSignal,
        AgentHandle,
        CompactionPreparation,
        CompactionReason,
        CompactionResult,
        HookContext,
        Model,
        SessionEntry,
        Usage,
    )

__all__ = ["CompactionFailed", "Outcome", "run_compaction"]

_FAILURE_PREFIX = {
    "manual": "Compaction failed: ",
    "threshold": "Auto-compaction failed: ",
    "overflow": "Context overflow recovery failed: ",
}


class CompactionFailed(Exception):
    """A compaction cannot go ahead (nothing to compact, an invalid plugin compaction …)."""


class _Cancelled(Exception):
    """A plugin cancelled, or the user aborted."""


@dataclass
class Outcome:
    """How a compaction ended; ``result`` is ``compaction_end``'s result on success."""

    compacted: bool
    result: CompactionResult | None = None
    aborted: bool = False
    error: str | None = None

    def verdict(self, retry: bool = False) -> CompactionVerdict:
        """The ``session_check_compaction`` answer for the kernel."""
        return CompactionVerdict(
            compacted=self.compacted,
            retry=retry and self.compacted,
            result=self.result,
            error_message=self.error or None,
            aborted=self.aborted,
        )


@dataclass(frozen=True)
class _Summary:
    text: str
    first_kept: str | None
    details: object
    usage: Usage | None


async def run_compaction(
    agent: AgentHandle,
    ctx: HookContext,
    reason: CompactionReason,
    *,
    will_retry: bool = False,
    custom_instructions: str | None = None,
    allow_fallback: bool = False,
) -> Outcome:
    """Compact the current branch of ``agent``'s session (see the module docstring).

    :param reason: ``"manual"``, ``"threshold"`` or ``"overflow"``
    :param will_retry: whether the failed attempt is retried after a successful compaction
    :param allow_fallback: use the deterministic summary when every summary request fails
    """
    agent.publish({"type": "compaction_start", "reason": reason})
    signal = agent.signal
    from_extension = False
    try:
        model = agent.model  # captured: a model switch meanwhile does not affect this compaction
        settings = effective_settings(ctx, agent, model)
        path = agent.session.get_branch()
        prep = prepare_compaction(path, settings, agent.session.build_context().messages)
        if prep is None:
            compacted = bool(path) and path[-1]["type"] == "compaction"
            raise CompactionFailed(
                "Already compacted" if compacted else "Nothing to compact (session too small)"
            )
        answer = await ctx.hooks.session_before_compact(
            preparation=prep,
            branch_entries=path,
            custom_instructions=custom_instructions,
            reason=reason,
            will_retry=will_retry,
            signal=signal,
        )
        if isinstance(answer, Cancel):
            raise _Cancelled
        if isinstance(answer, CompactionOverride):
            from_extension = True
            summary = _supplied(answer, path)
        else:
            summary = await _default_summary(
                agent, ctx, model, prep, signal, reason, custom_instructions, allow_fallback
            )
        if signal.aborted:
            raise _Cancelled
        return await _commit(agent, ctx, reason, will_retry, summary, from_extension)
    except (_Cancelled, Aborted):
        return await _failed(agent, ctx, reason, will_retry, from_extension, None)
    except Exception as error:
        text = str(error) or type(error).__name__
        return await _failed(
            agent, ctx, reason, will_retry, from_extension, _FAILURE_PREFIX[reason] + text
        )


def _supplied(supplied: CompactionOverride, path: Sequence[SessionEntry]) -> _Summary:
    """A plugin's compaction, checked against the branch."""
    if not supplied.summary:
        raise CompactionFailed("the compaction a plugin supplied has no summary")
    first = supplied.first_kept_entry_id
    if all(entry["id"] != first for entry in path):
        raise CompactionFailed(
            f"the compaction a plugin supplied keeps entry {first!r}, which is not on this branch"
        )
    return _Summary(supplied.summary, first, supplied.details, supplied.usage)


async def _default_summary(
    agent: AgentHandle,
    ctx: HookContext,
    model: Model,
    prep: CompactionPreparation,
    signal: AbortSignal,
    reason: CompactionReason,
    custom: str | None,
    allow_fallback: bool,
) -> _Summary:
    summarizer = Summarizer(
        model,
        agent.model_registry,
        signal,
        agent.publish,
        "compaction",
        reason,
        agent.retry,
        agent.thinking_level,
    )
    # The cap holds for what is stored: the file lists (at most a quarter of it) and, for a
    # split span, the separator come off first; the history and the span's prefix share the rest
    # about 3:2 (the reference gives them 0.8 and 0.5 of its reserve).
    cap = summarizer.cap_tokens
    read, modified = compute_file_lists(prep.file_ops)
    files = format_file_operations(read, modified, limit_tokens=cap // 4)
    split = prep.is_split_turn and bool(prep.turn_prefix_messages)
    budget = cap_left(cap, files, SPLIT_TURN_SEPARATOR) if split else cap_left(cap, files)
    history_cap = budget - budget * 2 // 5 if split else budget
    details: dict[str, object] = {}
    try:
        history_messages = prep.messages_to_summarize
        if history_messages or not split:
            text = await summarizer.summarize(
                history_messages,
                previous_summary=prep.previous_summary,
                custom_instructions=custom,
                cap_tokens=history_cap,
            )
        else:  # nothing before the split span: keep what the previous summary said
            text = cap_text(prep.previous_summary or NO_PRIOR_HISTORY, history_cap)
        if split:
            prefix = await summarizer.summarize(
                prep.turn_prefix_messages,
                instructions=TURN_PREFIX_PROMPT,
                cap_tokens=budget - history_cap,
            )
            text = merge_split_turn(text, prefix)
    except Aborted:
        raise
    except Exception as error:
        if not allow_fallback or signal.aborted:
            raise
        reason_text = str(error) or type(error).__name__
        text = deterministic_summary(prep, reason_text, cap_left(cap, files))
        details.update(fallback="deterministic", fallbackReason=reason_text)
        ctx.ui.notify(
            f"compaction: the summary was assembled without a model ({reason_text})", "warning"
        )
    details = {"readFiles": read, "modifiedFiles": modified, **details}
    # Retain-none keeps nothing the model sees: the entry records its own id (None asks the
    # session store for that), so the next compaction starts right after it.
    first_kept = None if prep.retain_none else prep.first_kept_entry_id
    return _Summary(text + files, first_kept, details, summarizer.usage)


async def _commit(
    agent: AgentHandle,
    ctx: HookContext,
    reason: CompactionReason,
    will_retry: bool,
    summary: _Summary,
    from_extension: bool,
) -> Outcome:
    # Measured now, from the context-edited projection: what the compaction actually replaces.
    tokens_before = estimate_context_tokens(agent.session.build_context().messages).tokens
    entry = agent.append_compaction(
        summary.text,
        summary.first_kept,
        tokens_before,
        details=summary.details,
        from_hook=True if from_extension else None,
        usage=summary.usage,
    )
    result: CompactionResult = {
        "summary": summary.text,
        "firstKeptEntryId": entry["firstKeptEntryId"],
        "tokensBefore": tokens_before,
        "estimatedTokensAfter": estimate_messages(agent.messages),
    }
    if summary.usage is not None:
        result["usage"] = summary.usage
    if summary.details is not None:
        result["details"] = summary.details
    await ctx.hooks.session_compact(compaction_entry=entry, from_extension=from_extension)
    agent.publish(
        {
            "type": "compaction_end",
            "reason": reason,
            "result": result,
            "aborted": False,
            "willRetry": will_retry,
        }
    )
    return Outcome(True, result)


async def _failed(
    agent: AgentHandle,
    ctx: HookContext,
    reason: CompactionReason,
    will_retry: bool,
    from_extension: bool,
    error: str | None,
) -> Outcome:
    aborted = error is None
    await ctx.hooks.session_compact_failed(
        reason=reason,
        error_message=error,
        aborted=aborted,
        will_retry=will_retry,
        from_extension=from_extension,
    )
    if error is None:
        agent.publish(
            {"type": "compaction_end", "reason": reason, "aborted": True, "willRetry": False}
        )
    else:
        agent.publish(
            {
                "type": "compaction_end",
                "reason": reason,
                "aborted": False,
                "willRetry": False,
                "errorMessage": error,
            }
        )
    return Outcome(False, aborted=aborted, error=error)
