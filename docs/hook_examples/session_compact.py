"""Tell the user how large the context was before a compaction."""

from __future__ import annotations

from knightcode import CompactionEntry, HookContext, hookimpl


@hookimpl
def session_compact(
    compaction_entry: CompactionEntry, from_extension: bool, ctx: HookContext
) -> None:
    """The entry is the session file's dict: its keys are camelCase."""
    source = "a plugin" if from_extension else "knightcode"
    tokens = compaction_entry["tokensBefore"]
    ctx.ui.notify(f"Context of {tokens} tokens compacted (summary by {source})")
