"""Classifying failed assistant messages: context overflow, retryable, or fatal.

The clients put the HTTP status first in ``errorMessage`` (``"429 Too Many Requests: …"``,
``"400 status code (no body)"``) and describe transport failures in words (``"Connection error:
…"``, ``"terminated: …"``, ``"Request timed out: …"``), so classification works on the text alone,
exactly like the reference: a message read back from a session file classifies the same way.

* **Overflow** (:func:`is_context_overflow`): the request did not fit the context window. The
  agent compacts and retries instead of backing off.
* **Retryable** (:func:`is_retryable`): rate limits, 5xx, overloaded, dropped connections,
  timeouts. The agent retries with :func:`backoff_delay_ms`, honouring ``Retry-After``.
* Anything else is **fatal** (401/403, other 400s): retrying cannot help.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Literal

from knightcode._types.messages import AssistantMessage

__all__ = [
    "OVERFLOW_PATTERNS",
    "RETRYABLE_PATTERN",
    "backoff_delay_ms",
    "classify_error",
    "is_context_overflow",
    "is_retryable",
    "retry_after_seconds",
]

# The wording each provider uses when the prompt does not fit (the reference's list, plus the
# variants it gained later). Sample messages are in tests/llm/test_errors.py.
OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"prompt is too long",  # Anthropic
        r"input is too long for requested model",  # Amazon Bedrock
        r"exceeds the context window",  # OpenAI
        r"input token count.*exceeds the maximum",  # Google Gemini
        r"maximum prompt length is \d+",  # xAI
        r"reduce the length of the messages",  # Groq
        r"maximum context length is \d+ tokens",  # OpenRouter, vLLM, DeepSeek
        r"exceeds the limit of \d+",  # GitHub Copilot
        r"exceeds the available context size",  # llama.cpp server
        r"greater than the context length",  # LM Studio
        r"context window exceeds limit",  # MiniMax
        r"exceeded model token limit",  # Kimi
        r"too large for model with \d+ maximum context length",  # Mistral
        r"model_context_window_exceeded",  # z.ai (a finish reason surfaced as an error)
        r"prompt too long; exceeded (?:max )?context length",  # Ollama
        r"context[_ ]length[_ ]exceeded",  # generic (OpenAI's error code)
        r"too many tokens",  # generic
        r"token limit exceeded",  # generic
    )
)

# Cerebras answers an oversized prompt with a bare 400/413.
_BODYLESS_OVERFLOW = re.compile(r"^4(00|13)\s*(status code)?\s*\(no body\)", re.IGNORECASE)

# Rate-limit texts can say "too many tokens (per minute)": that is a 429, not an overflow.
_NOT_OVERFLOW = re.compile(r"rate.?limit|too many requests|^429\b", re.IGNORECASE)

RETRYABLE_PATTERN = re.compile(
    # the reference's list …
    # Status codes only as whole numbers: an error naming http://127.0.0.1:45029 is not a 502.
    r"overloaded|rate.?limit|too many requests|\b(?:429|500|502|503|504)\b|service.?unavailable"
    r"|server.?error|internal.?error|connection.?error|connection.?refused|other side closed"
    r"|fetch failed|upstream.?connect|reset before headers|terminated|retry delay"
    # … plus what Python's HTTP stack says for the same failures, and Anthropic's 529.
    r"|\b529\b|connection.?reset|connection.?closed|timed? ?out|timeout|network.?error"
    # … and the exceptions Bedrock reports inside a stream.
    r"|throttl|internal.?server|modelStreamError",
    re.IGNORECASE,
)


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether ``message`` failed (or silently degraded) because the prompt was too long.

    :param message: the assistant message the stream ended with
    :param context_window: the model's window; enables "silent" overflow detection, where a
        provider accepted the request and reported more input tokens than the window holds
    """
    stop_reason = message.get("stopReason")
    if stop_reason == "error":
        text = message.get("errorMessage") or ""
        if _BODYLESS_OVERFLOW.search(text):
            return True
        if _NOT_OVERFLOW.search(text):
            return False
        return any(pattern.search(text) for pattern in OVERFLOW_PATTERNS)
    if stop_reason == "stop" and context_window:
        usage = message.get("usage")
        if usage and usage["input"] + usage["cacheRead"] > context_window:
            return True
    return False


def is_retryable(message: AssistantMessage) -> bool:
    """Whether a failed message is worth retrying after a delay (never an overflow)."""
    if message.get("stopReason") != "error":
        return False
    text = message.get("errorMessage") or ""
    if is_context_overflow(message):
        return False
    return RETRYABLE_PATTERN.search(text) is not None


def classify_error(
    message: AssistantMessage, context_window: int | None = None
) -> Literal["overflow", "retryable", "fatal"] | None:
    """``"overflow"``, ``"retryable"`` or ``"fatal"`` for a failed message; None when it did not
    fail (or silently overflowed: then ``"overflow"``).
    """
    if is_context_overflow(message, context_window):
        return "overflow"
    if message.get("stopReason") != "error":
        return None
    return "retryable" if is_retryable(message) else "fatal"


_SECONDS_IN_TEXT = re.compile(
    r"(?:retry.?after|try again in|retry in)\D{0,12}?(\d+(?:\.\d+)?)"
    r"\s*(ms|milliseconds?|s|sec|seconds?)?",
    re.IGNORECASE,
)


def retry_after_seconds(
    source: Mapping[str, str] | str | None, now: float | None = None
) -> float | None:
    """How long the provider asked us to wait, in seconds, or None when it did not say.

    :param source: response headers (``retry-after-ms``, then ``retry-after`` as seconds or an
        HTTP date; names are matched case-insensitively) or an error text such as
        ``"Please try again in 6.5s"``
    :param now: the current time for HTTP dates (epoch seconds; defaults to the clock)
    """
    if source is None:
        return None
    if isinstance(source, str):
        match = _SECONDS_IN_TEXT.search(source)
        if not match:
            return None
        value = float(match.group(1))
        unit = (match.group(2) or "s").lower()
        return value / 1000 if unit.startswith("m") else value
    lowered = {key.lower(): value for key, value in source.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError, IndexError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def backoff_delay_ms(
    attempt: int,
    base_delay_ms: int = 2000,
    max_delay_ms: int = 60000,
    retry_after_ms: float | None = None,
) -> int:
    """The wait before retry number ``attempt`` (1-based): ``base · 2^(attempt-1)``, capped at
    ``max_delay_ms``, or the provider's ``Retry-After`` when that is longer.

    A ``Retry-After`` beyond ``max_delay_ms`` is returned as is (retrying earlier would only earn
    another 429); the agent caps it at ``retry.maxAgentDelayMs``
    (:func:`knightcode._agent.retry.retry_delay_ms`).
    """
    exponential = min(base_delay_ms * 2 ** max(0, attempt - 1), max_delay_ms)
    if retry_after_ms is not None and retry_after_ms > exponential:
        return math.ceil(retry_after_ms)
    return int(exponential)
