"""Say where ``/tree`` moved to."""

from __future__ import annotations

from knightcode import BranchSummaryEntry, HookContext, hookimpl


@hookimpl
def session_tree(
    new_leaf_id: str | None, summary_entry: BranchSummaryEntry | None, ctx: HookContext
) -> None:
    """Notify, mentioning the summary written for the branch left."""
    note = f" ({len(summary_entry['summary'])} characters of summary)" if summary_entry else ""
    ctx.ui.notify(f"Moved to {new_leaf_id or 'the root'}{note}")
