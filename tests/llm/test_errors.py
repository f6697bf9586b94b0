"""Classification of failed assistant messages: overflow, retryable, fatal; Retry-After; backoff."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import pytest

from knightcode._llm.errors import (
    OVERFLOW_PATTERNS,
    backoff_delay_ms,
    classify_error,
    is_context_overflow,
    is_retryable,
    retry_after_seconds,
)


def failed(text: str) -> Any:
    return {
        "role": "assistant",
        "content": [],
        "api": "x",
        "provider": "p",
        "model": "m",
        "timestamp": 0,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": "error",
        "errorMessage": text,
    }


def finished(input_tokens: int, cache_read: int = 0, stop_reason: str = "stop") -> Any:
    message = failed("")
    del message["errorMessage"]
    message["stopReason"] = stop_reason
    message["usage"].update(input=input_tokens, cacheRead=cache_read)
    return message


OVERFLOW_SAMPLES = [
    ("Anthropic", "400 Bad Request: prompt is too long: 213462 tokens > 200000 maximum"),
    ("Bedrock", "input is too long for requested model"),
    (
        "OpenAI",
        "400 Bad Request: Your input exceeds the context window of this model. "
        "Please adjust your input",
    ),
    (
        "Gemini",
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
    ),
    ("xAI", "This model's maximum prompt length is 131072 but the request contains 537812 tokens"),
    ("Groq", "Please reduce the length of the messages or completion"),
    (
        "OpenRouter",
        "This endpoint's maximum context length is 128000 tokens. "
        "However, you requested about 150000 tokens",
    ),
    ("Copilot", "prompt token count of 130000 exceeds the limit of 128000"),
    (
        "llama.cpp",
        "400 Bad Request: the request exceeds the available context size, try increasing it",
    ),
    ("LM Studio", "tokens to keep from the initial prompt is greater than the context length"),
    ("MiniMax", "invalid params, context window exceeds limit"),
    ("Kimi", "Your request exceeded model token limit: 262144 (requested: 300000)"),
    (
        "Mistral",
        "Prompt contains 140000 tokens and 0 draft tokens, "
        "too large for model with 131072 maximum context length",
    ),
    ("z.ai", "model_context_window_exceeded"),
    ("Ollama", "prompt too long; exceeded max context length by 100 tokens"),
    ("generic code", "400 Bad Request: context_length_exceeded"),
    ("generic words", "context length exceeded"),
    ("generic too many", "Request has too many tokens"),
    ("generic limit", "token limit exceeded for this request"),
    ("Cerebras 400", "400 status code (no body)"),
    ("Cerebras 413", "413 (no body)"),
]


@pytest.mark.parametrize(
    ("provider", "text"), OVERFLOW_SAMPLES, ids=[p for p, _ in OVERFLOW_SAMPLES]
)
def test_overflow_patterns(provider: str, text: str) -> None:
    message = failed(text)
    assert is_context_overflow(message)
    assert classify_error(message) == "overflow"
    assert not is_retryable(message)  # overflow is never retried with backoff


def test_every_pattern_has_a_sample() -> None:
    samples = [text for _, text in OVERFLOW_SAMPLES]
    for pattern in OVERFLOW_PATTERNS:
        assert any(pattern.search(text) for text in samples), pattern.pattern


@pytest.mark.parametrize(
    "text",
    [
        "429 Too Many Requests: Rate limit reached: too many tokens per minute",
        "rate limit: token limit exceeded for this minute",
        "400 Bad Request: invalid tool schema",
        "401 Unauthorized: invalid x-api-key",
    ],
)
def test_not_overflow(text: str) -> None:
    assert not is_context_overflow(failed(text))


RETRYABLE = [
    "429 Too Many Requests: Rate limit reached for requests",
    "500 Internal Server Error: oops",
    "502 Bad Gateway: upstream",
    "503 Service Unavailable: maintenance",
    "504 Gateway Timeout: slow",
    "529 Overloaded: Overloaded",
    "overloaded_error: Overloaded",
    "Connection error: [Errno 111] Connection refused",
    "Connection error: connection reset by peer",
    "terminated: the connection closed before the response was complete",
    "Request timed out while waiting for data: ",
    "upstream connect error or disconnect/reset before headers",
    "fetch failed",
    "other side closed",
]
FATAL = [
    "401 Unauthorized: Incorrect API key provided",
    "403 Forbidden: not allowed",
    "400 Bad Request: messages.0.content: field required",
    "404 Not Found: model does not exist",
    "Request was aborted",
]


@pytest.mark.parametrize("text", RETRYABLE)
def test_retryable(text: str) -> None:
    assert is_retryable(failed(text))
    assert classify_error(failed(text)) == "retryable"


@pytest.mark.parametrize("text", FATAL)
def test_fatal(text: str) -> None:
    assert not is_retryable(failed(text))
    assert classify_error(failed(text)) == "fatal"


def test_success_is_not_classified() -> None:
    assert classify_error(finished(10)) is None
    assert not is_retryable(finished(10))


def test_silent_overflow() -> None:
    assert is_context_overflow(finished(900, cache_read=200), context_window=1000)
    assert not is_context_overflow(finished(900, cache_read=100), context_window=1000)
    assert not is_context_overflow(finished(5000))  # no window known: cannot tell
    assert not is_context_overflow(finished(5000, stop_reason="length"), context_window=1000)
    assert classify_error(finished(2000), context_window=1000) == "overflow"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "5"}, 5.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"x-other": "1"}, None),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(headers) == expected


def test_retry_after_http_date() -> None:
    now = 1_700_000_000.0
    when = datetime.fromtimestamp(now + 30, tz=UTC)
    assert retry_after_seconds(
        {"Retry-After": format_datetime(when, usegmt=True)}, now=now
    ) == pytest.approx(30)
    past = datetime.fromtimestamp(now - 30, tz=UTC)
    assert retry_after_seconds({"Retry-After": format_datetime(past, usegmt=True)}, now=now) == 0.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Rate limit reached. Please try again in 6.5s.", 6.5),
        ("Please try again in 20ms.", 0.02),
        ("retry after 3 seconds", 3.0),
        ("no hint here", None),
        (None, None),
    ],
)
def test_retry_after_in_text(text: str | None, expected: float | None) -> None:
    result = retry_after_seconds(text)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)


def test_backoff_doubles_and_caps() -> None:
    assert [backoff_delay_ms(n, 2000, 60000) for n in (1, 2, 3, 4)] == [2000, 4000, 8000, 16000]
    assert backoff_delay_ms(10, 2000, 60000) == 60000


def test_backoff_honours_a_longer_retry_after() -> None:
    assert backoff_delay_ms(1, 2000, 60000, retry_after_ms=7000) == 7000
    assert backoff_delay_ms(3, 2000, 60000, retry_after_ms=1000) == 8000
    assert (
        backoff_delay_ms(1, 2000, 60000, retry_after_ms=120000) == 120000
    )  # the caller decides to give up
    assert backoff_delay_ms(1, 2000, 60000, retry_after_ms=1500.2) == 2000


def test_status_codes_inside_other_numbers_are_not_retryable() -> None:
    """A port such as 45029 or 15003 in an error text is not an HTTP 502 or 500."""
    from knightcode._llm.errors import is_retryable

    def failed(text: str) -> dict:  # type: ignore[type-arg]
        return {
            "role": "assistant",
            "content": [],
            "stopReason": "error",
            "errorMessage": text,
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        }

    assert not is_retryable(
        failed("The llama.cpp router at http://127.0.0.1:45029 rejected the API key (401).")
    )
    assert not is_retryable(failed("401 Unauthorized at http://127.0.0.1:15003/v1"))
    assert is_retryable(failed("502 Bad Gateway"))
    assert is_retryable(failed("HTTP 529: overloaded_error"))
    assert is_retryable(failed("status 503"))
