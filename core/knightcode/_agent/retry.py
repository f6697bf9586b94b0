"""Retry settings, and how long to wait before a retry."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._types.messages import AgentMessage, AssistantMessage

__all__ = ["RetrySettings", "last_assistant", "retry_delay_ms"]


@dataclass(frozen=True)
class RetrySettings:
    """``retry.*`` settings: on/off, attempts, and the exponential backoff's base and cap.

    :param enabled: retry transient provider errors (rate limits, overload, dropped streams)
    :param max_retries: attempts after the first
    :param base_delay_ms: the first wait; each next one doubles
    :param max_delay_ms: the longest wait, a provider's ``Retry-After`` included (0: no cap)
    """

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000


def retry_delay_ms(settings: RetrySettings, attempt: int, retry_after_ms: float | None) -> int:
    """The wait before retry ``attempt`` under these settings: the backoff of
    :func:`knightcode._llm.errors.backoff_delay_ms`, or the provider's ``Retry-After`` when
    longer, never beyond ``max_delay_ms`` (settings ``retry.maxAgentDelayMs``; 0: no cap).

    ``retry.maxAgentDelayMs`` bounds every wait, a server's request included: a ``Retry-After``
    of a day must not hold the run for a day (one beyond ``retry.provider.maxRetryDelayMs`` does
    not even get here: the request fails saying what the server asked).
    """
    from knightcode._llm.errors import backoff_delay_ms

    cap = settings.max_delay_ms or 2**53
    return min(backoff_delay_ms(attempt, settings.base_delay_ms, cap, retry_after_ms), cap)


def last_assistant(messages: Sequence[AgentMessage]) -> AssistantMessage | None:
    """The last assistant message among ``messages``."""
    for message in reversed(messages):
        if message["role"] == "assistant":
            return message
    return None
