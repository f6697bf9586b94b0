"""Replace the summary with a note, except when compacting to recover from an overflow."""

from __future__ import annotations

from knightcode import (
    Cancel,
    CompactionOverride,
    CompactionPreparation,
    CompactionReason,
    hookimpl,
)


@hookimpl
def session_before_compact(
    preparation: CompactionPreparation, reason: CompactionReason
) -> Cancel | CompactionOverride | None:
    """Supply the summary for ``/compact`` and threshold compactions."""
    if reason == "overflow":
        return None  # let the default compaction recover
    count = len(preparation.messages_to_summarize)
    return CompactionOverride(
        summary=f"## Goal\n(An earlier conversation of {count} messages was dropped.)",
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"dropped_messages": count},
    )
