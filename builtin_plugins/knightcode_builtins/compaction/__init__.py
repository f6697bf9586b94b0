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
from typing import Any

from knightcode import hookimpl

__all__ = ["compact_command"]

# The plugin is imported by every command, ``--help`` included: the machinery (the session
# store, the model clients) is imported by the hooks, when compaction is first needed.


@hookimpl
async def session_check_compaction(
    trigger: str, message: Any, will_retry: bool, custom_instructions: str | None, ctx: Any
) -> dict[str, Any] | None:
    """Decide whether to compact at this point, and compact (see :mod:`.triggers`)."""
    from .triggers import check

    verdict: dict[str, Any] | None = await check(
        trigger, message, will_retry, custom_instructions, ctx
    )
    return verdict


@hookimpl
def session_before_tree(preparation: Any, ctx: Any) -> None:
    """Offer the default branch summary when the user asked for one; the navigation uses it
    unless a plugin cancels or supplies its own summary.
    """
    agent = getattr(ctx, "agent", None) if ctx is not None else None
    if agent is None or not getattr(preparation, "user_wants_summary", False):
        return
    if getattr(preparation, "summarizer", None) is None:
        from .branch import BranchSummarizer

        preparation.summarizer = BranchSummarizer(agent, ctx)


async def compact_command(args: str, ctx: Any) -> str:
    """``/compact [instructions]``: compact now; the instructions focus the summary."""
    agent = getattr(ctx, "agent", None)
    if agent is None:
        text, level = "compact: no session is running", "error"
    else:
        verdict = await agent.compact(args.strip() or None)
        result = verdict.get("result")
        if verdict.get("compacted") and isinstance(result, dict):
            text = (
                f"Compacted: {result['tokensBefore']} tokens before, about "
                f"{result['estimatedTokensAfter']} now."
            )
            level = "info"
        elif verdict.get("aborted"):
            text, level = "Compaction cancelled.", "warning"
        else:
            text, level = str(verdict.get("errorMessage") or "Nothing was compacted."), "error"
    ctx.ui.notify(text, level)
    return text


@hookimpl
def register_commands(register: Callable[..., None]) -> None:
    register(
        name="compact",
        description="Summarize older messages to free context; optional text focuses the summary",
        handler=compact_command,
    )
