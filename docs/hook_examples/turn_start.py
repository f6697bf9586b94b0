"""Remember when each turn started."""

from __future__ import annotations

from knightcode import hookimpl

STARTED: dict[int, int] = {}
"""Turn index -> start time (milliseconds since the epoch)."""


@hookimpl
def turn_start(turn_index: int, timestamp: int) -> None:
    """Record the start."""
    STARTED[turn_index] = timestamp
