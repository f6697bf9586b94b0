"""Deciding whether a failed assistant attempt is retried, and how long to wait first."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RetrySettings:
    """``retry.*`` settings: on/off, attempts, and the exponential backoff's base and cap."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000


def retry_delay_ms(settings: RetrySettings, attempt: int, retry_after_ms: float | None) -> int:
    """The wait before retry ``attempt`` under these settings (``max_delay_ms`` 0: no cap); the
    formula itself is :func:`knightcode._llm.errors.backoff_delay_ms`.
    """
    from knightcode._llm.errors import backoff_delay_ms

    cap = settings.max_delay_ms or 2**53
    return backoff_delay_ms(attempt, settings.base_delay_ms, cap, retry_after_ms)


async def sleep_unless_aborted(delay_ms: int, signal: asyncio.Event) -> bool:
    """Wait ``delay_ms``; returns False at once when ``signal`` is set meanwhile."""
    try:
        await asyncio.wait_for(signal.wait(), delay_ms / 1000)
    except TimeoutError:
        return True
    return False


def last_assistant(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last assistant message of a run."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return dict(message) if not isinstance(message, dict) else message
    return None
