"""Time every tool call (see the ``tool_execution_end`` example for the other half)."""

from __future__ import annotations

import time

from knightcode import hookimpl

STARTED: dict[str, float] = {}
"""Tool call id -> ``time.monotonic()`` at its start."""


@hookimpl
def tool_execution_start(tool_call_id: str, tool_name: str, args: dict[str, object]) -> None:
    """Record the start."""
    STARTED[tool_call_id] = time.monotonic()
