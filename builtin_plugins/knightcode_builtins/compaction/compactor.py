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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from knightcode._llm.summary import SummarizationAborted
from knightcode._session import estimate_context_tokens

from .fallback import deterministic_summary
from .file_ops import compute_file_lists, format_file_operations
from .preparation import CompactionPreparation, estimate_messages, prepare_compaction
from .prompts import NO_PRIOR_HISTORY, TURN_PREFIX_PROMPT, merge_split_turn
from .state import agent_signal, effective_settings
from .summarize import Summarizer, cap_text

__all__ = ["CompactionFailed", "Outcome", "emit", "run_compaction"]

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
    result: dict[str, Any] | None = None
    aborted: bool = False
    error: str | None = None

    def verdict(self, retry: bool = False) -> dict[str, Any]:
        """The ``session_check_compaction`` answer for the kernel."""
        answer: dict[str, Any] = {"compacted": self.compacted, "retry": retry and self.compacted}
        if self.result is not None:
            answer["result"] = self.result
        if self.error:
            answer["errorMessage"] = self.error
        if self.aborted:
            answer["aborted"] = True
        return answer


async def emit(ctx: Any, hook: str, **kwargs: Any) -> Any:
    """Fire a hook for the other plugins, if any implement it."""
    host = getattr(ctx, "host", None)
    if host is None or not host.has_handlers(hook):
        return None
    return await host.emit(hook, **kwargs)


async def run_compaction(
    agent: Any,
    ctx: Any,
    reason: str,
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
    signal = agent_signal(agent)
    from_extension = False
    try:
        model = agent.model  # captured: a model switch meanwhile does not affect this compaction
        settings = effective_settings(ctx, agent, model)
        path = agent.session.get_branch()
        prep = prepare_compaction(path, settings)
        if prep is None:
            compacted = bool(path) and path[-1].get("type") == "compaction"
            raise CompactionFailed(
                "Already compacted" if compacted else "Nothing to compact (session too small)"
            )
        answer = await emit(
            ctx,
            "session_before_compact",
            preparation=prep,
            branch_entries=path,
            custom_instructions=custom_instructions,
            reason=reason,
            will_retry=will_retry,
            signal=signal,
        )
        if isinstance(answer, Mapping) and answer.get("cancel"):
            raise _Cancelled
        supplied = answer.get("compaction") if isinstance(answer, Mapping) else None
        first_kept: str | None
        if supplied:
            from_extension = True
            summary, first_kept, details, usage = _supplied(supplied, path)
        else:
            # Retain-none keeps nothing the model sees: the entry records its own id (None asks
            # the session store for that), so the next compaction starts right after it.
            first_kept = None if prep.retain_none else prep.first_kept_entry_id
            summary, details, usage = await _default_summary(
                agent, ctx, model, prep, signal, reason, custom_instructions, allow_fallback
            )
        if signal.is_set():
            raise _Cancelled
        return await _commit(
            agent, ctx, reason, will_retry, summary, first_kept, details, usage, from_extension
        )
    except (_Cancelled, SummarizationAborted):
        return await _failed(agent, ctx, reason, will_retry, from_extension, None)
    except Exception as error:
        text = str(error) or type(error).__name__
        return await _failed(
            agent,
            ctx,
            reason,
            will_retry,
            from_extension,
            _FAILURE_PREFIX.get(reason, "Compaction failed: ") + text,
        )


def _supplied(supplied: Mapping[str, Any], path: Sequence[Any]) -> tuple[str, str, Any, Any]:
    """A plugin's compaction, checked (snake_case keys as documented; camelCase accepted)."""
    summary = supplied.get("summary")
    first = supplied.get("first_kept_entry_id", supplied.get("firstKeptEntryId"))
    if not isinstance(summary, str) or not summary:
        raise CompactionFailed("the compaction a plugin supplied has no summary")
    if not isinstance(first, str) or all(entry["id"] != first for entry in path):
        raise CompactionFailed(
            f"the compaction a plugin supplied keeps entry {first!r}, which is not on this branch"
        )
    return summary, first, supplied.get("details"), supplied.get("usage")


async def _default_summary(
    agent: Any,
    ctx: Any,
    model: Any,
    prep: CompactionPreparation,
    signal: Any,
    reason: str,
    custom: str | None,
    allow_fallback: bool,
) -> tuple[str, dict[str, Any], Any]:
    summarizer = Summarizer(
        model,
        agent.models,
        signal,
        agent.publish,
        "compaction",
        reason,
        getattr(agent, "retry", None),
        getattr(agent, "thinking_level", None),
    )
    details: dict[str, Any] = {}
    try:
        history_messages = prep.messages_to_summarize
        if history_messages or not prep.is_split_turn or not prep.turn_prefix_messages:
            text = await summarizer.summarize(
                history_messages,
                previous_summary=prep.previous_summary,
                custom_instructions=custom,
            )
        else:  # nothing before the split span: keep what the previous summary said
            text = cap_text(prep.previous_summary or NO_PRIOR_HISTORY, summarizer.cap_tokens)
        if prep.is_split_turn and prep.turn_prefix_messages:
            prefix = await summarizer.summarize(
                prep.turn_prefix_messages, instructions=TURN_PREFIX_PROMPT
            )
            text = merge_split_turn(text, prefix)
    except SummarizationAborted:
        raise
    except Exception as error:
        if not allow_fallback or signal.is_set():
            raise
        reason_text = str(error) or type(error).__name__
        text = deterministic_summary(prep, reason_text, summarizer.cap_tokens)
        details.update(fallback="deterministic", fallbackReason=reason_text)
        ui = getattr(ctx, "ui", None)
        if ui is not None:
            ui.notify(
                f"compaction: the summary was assembled without a model ({reason_text})", "warning"
            )
    read, modified = compute_file_lists(prep.file_ops)
    details = {"readFiles": read, "modifiedFiles": modified, **details}
    return text + format_file_operations(read, modified), details, summarizer.usage


async def _commit(
    agent: Any,
    ctx: Any,
    reason: str,
    will_retry: bool,
    summary: str,
    first_kept: str | None,
    details: Any,
    usage: Any,
    from_extension: bool,
) -> Outcome:
    session = agent.session
    # Measured now, from the context-edited projection: what the compaction actually replaces.
    tokens_before = estimate_context_tokens(session.build_context().messages).tokens
    entry_id = session.append_compaction(
        summary,
        first_kept,
        tokens_before,
        details=details,
        from_hook=True if from_extension else None,
        usage=usage,
    )
    first_kept = session.get_entry(entry_id)["firstKeptEntryId"]
    context = session.build_context().messages
    agent.messages[:] = context  # in place: a running turn loop holds this very list
    result: dict[str, Any] = {
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": tokens_before,
        "estimatedTokensAfter": estimate_messages(context),
    }
    if usage is not None:
        result["usage"] = usage
    if details is not None:
        result["details"] = details
    await emit(
        ctx,
        "session_compact",
        compaction_entry=session.get_entry(entry_id),
        from_extension=from_extension,
    )
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
    agent: Any, ctx: Any, reason: str, will_retry: bool, from_extension: bool, error: str | None
) -> Outcome:
    aborted = error is None
    await emit(
        ctx,
        "session_compact_failed",
        reason=reason,
        error_message=error,
        aborted=aborted,
        will_retry=will_retry,
        from_extension=from_extension,
    )
    event: dict[str, Any] = {
        "type": "compaction_end",
        "reason": reason,
        "aborted": aborted,
        "willRetry": False,
    }
    if error is not None:
        event["errorMessage"] = error
    agent.publish(event)
    return Outcome(False, aborted=aborted, error=error)
