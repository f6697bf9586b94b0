"""Log compactions that failed or were aborted."""

from __future__ import annotations

import sys

from knightcode import CompactionReason, hookimpl


@hookimpl
def session_compact_failed(
    reason: CompactionReason, error_message: str | None, aborted: bool
) -> None:
    """One line on stderr."""
    outcome = "aborted" if aborted else f"failed: {error_message}"
    print(f"compaction ({reason}) {outcome}", file=sys.stderr)
