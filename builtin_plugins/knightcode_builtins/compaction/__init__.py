"""builtin:compaction — automatic and manual compaction, overflow recovery, branch summaries.

The kernel asks ``session_check_compaction`` at every point where the context may need
compacting (before a prompt, between turns, after a run, on a provider overflow or an early
``length`` stop, and on ``/compact``); :mod:`.triggers` decides and :mod:`.compactor` compacts.
For ``/tree`` navigation with a summary, ``session_before_tree`` offers the default branch
summarizer (:mod:`.branch`) to the navigation, which calls it once every plugin had its say.
The ``/compact [instructions]`` command is registered here.

Only the public plugin API is used. Blocking the plugin (``"-builtin:compaction"``) leaves
knightcode without any compaction: overflows stay errors and ``/compact`` is refused.
See ``docs/compaction.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from knightcode import hookimpl

if TYPE_CHECKING:
    from knightcode import (
        AssistantMessage,
        CompactionVerdict,
        HookContext,
        NotifyLevel,
        TreePreparation,
    )

__all__ = ["compact_command"]

# The plugin is imported by every command, ``--help`` included: the machinery (the session
# store, the model clients) is imported by the hooks, when compaction is first needed.


@hookimpl
async def session_check_compaction(
    trigger: Literal["before_prompt", "between_turns", "after_run", "overflow", "length", "manual"],
    message: AssistantMessage | None,
    will_retry: bool,
    custom_instructions: str | None,
    ctx: HookContext,
) -> CompactionVerdict | None:
    """Decide whether to compact at this point, and compact (see :mod:`.triggers`)."""
    from .triggers import check

    return await check(trigger, message, will_retry, custom_instructions, ctx)


@hookimpl
def session_before_tree(preparation: TreePreparation, ctx: HookContext) -> None:
    """Offer the default branch summary when the user asked for one; the navigation uses it
    unless a plugin cancels or supplies its own summary.
    """
    if ctx.agent is None or not preparation.user_wants_summary:
        return
    if preparation.summarizer is None:
        from .branch import DefaultBranchSummarizer

        preparation.summarizer = DefaultBranchSummarizer(ctx.agent, ctx)


async def compact_command(args: str, ctx: HookContext) -> str:
    """``/compact [instructions]``: compact now; the instructions focus the summary."""
    level: NotifyLevel
    if ctx.agent is None:
        text, level = "compact: no session is running", "error"
    else:
        verdict = await ctx.agent.compact(args.strip() or None)
        result = verdict.result
        if verdict.compacted and result is not None:
            text = (
                f"Compacted: {result['tokensBefore']} tokens before, about "
                f"{result['estimatedTokensAfter']} now."
            )
            level = "info"
        elif verdict.aborted:
            text, level = "Compaction cancelled.", "warning"
        else:
            text, level = verdict.error_message or "Nothing was compacted.", "error"
    ctx.ui.notify(text, level)
    return text


@hookimpl
def register_commands(register: Callable[..., None]) -> None:
    """``/compact``."""
    register(
        name="compact",
        description="Summarize older messages to free context; optional text focuses the summary",
        handler=compact_command,
    )
