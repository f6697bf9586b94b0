"""Token estimates, computed exactly like the reference so thresholds trigger at the same point.

The heuristic is ``ceil(chars / 4)``, where "chars" is JavaScript's ``String.length``: UTF-16 code
units, so an emoji or any astral-plane character counts 2. Estimates run on every turn over the
session projection; they walk the stored dicts and build nothing per message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from knightcode._session import jsonl
from knightcode._types.messages import Usage

__all__ = [
    "IMAGE_CHARS",
    "ContextUsageEstimate",
    "calculate_context_tokens",
    "estimate_context_tokens",
    "estimate_text_tokens",
    "estimate_tokens",
    "get_assistant_usage",
    "get_last_assistant_usage",
    "utf16_len",
]

IMAGE_CHARS = 4800
"""What one image counts in tool results and custom messages (1200 tokens); ignored for users."""


def utf16_len(text: str) -> int:
    """JavaScript's ``text.length``: UTF-16 code units (astral characters count 2)."""
    if text.isascii():  # O(1) in CPython: the common case costs nothing
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _tokens(chars: int) -> int:
    return -(-chars // 4)  # ceil without floats


def estimate_text_tokens(text: str) -> int:
    """Estimate the tokens of a bare string (0 for empty)."""
    return _tokens(utf16_len(text)) if text else 0


def _str_chars(value: object) -> int:
    # The length of a field that should be a string; a damaged file may hold anything there.
    return utf16_len(value) if isinstance(value, str) else 0


def _text_and_images(content: object, image_chars: int) -> int:
    if isinstance(content, str):
        return utf16_len(content)
    chars = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if isinstance(text, str) and text:
                    chars += utf16_len(text)
            elif kind == "image":
                chars += image_chars
    return chars


def _assistant_chars(content: object) -> int:
    chars = 0
    if not isinstance(content, list):  # the reference iterates characters of a string: 0
        return 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += utf16_len(block.get("text") or "")
        elif kind == "thinking":
            chars += utf16_len(block.get("thinking") or "")
        elif kind == "toolCall":
            # name + JSON.stringify(arguments): compact, raw Unicode, key order kept.
            chars += utf16_len(block.get("name") or "")
            if "arguments" in block:
                chars += utf16_len(jsonl.dumps(block["arguments"]))
    return chars


def estimate_tokens(message: Mapping[str, object]) -> int:
    """Estimate one message's tokens with the reference's per-role rules.

    user: text only (images ignored); assistant: text + thinking + tool name and compact JSON
    arguments; custom and toolResult: text + 4800 per image; bashExecution: command + output;
    branch and compaction summaries: the summary. Other roles count 0.
    """
    role = message.get("role")
    if role == "user":
        chars = _text_and_images(message.get("content"), 0)
    elif role == "assistant":
        chars = _assistant_chars(message.get("content"))
    elif role == "custom" or role == "toolResult":
        chars = _text_and_images(message.get("content"), IMAGE_CHARS)
    elif role == "bashExecution":
        chars = _str_chars(message.get("command")) + _str_chars(message.get("output"))
    elif role == "branchSummary" or role == "compactionSummary":
        chars = _str_chars(message.get("summary"))
    else:
        return 0
    return _tokens(chars)


def calculate_context_tokens(usage: Usage) -> int:
    """Context size a provider reported: ``totalTokens``, else the sum of its parts.

    A count that is not a number (a damaged file) counts as 0.
    """
    total = _count(usage.get("totalTokens"))
    if total:
        return total
    return (
        _count(usage.get("input"))
        + _count(usage.get("output"))
        + _count(usage.get("cacheRead"))
        + _count(usage.get("cacheWrite"))
    )


def count_value(value: object) -> float:
    """A count read from a file that may be damaged: the number, or 0 for anything else (a
    string, ``null``, a bool, NaN).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return 0
    return value


def _count(value: object) -> int:
    return int(count_value(value))


def get_assistant_usage(message: Mapping[str, object]) -> Usage | None:
    """The usage of an assistant message, unless it was aborted or failed (no valid usage)."""
    if message.get("role") != "assistant":
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    if not isinstance(usage, dict) or not usage:
        return None
    # A provider client wrote it; its counts are read with .get() in case a file damaged them.
    return cast(Usage, usage)


def get_last_assistant_usage(entries: Sequence[Mapping[str, object]]) -> Usage | None:
    """The usage of the last valid assistant ``message`` entry in ``entries``."""
    for entry in reversed(entries):
        if entry.get("type") == "message":
            message = entry.get("message")
            usage = get_assistant_usage(message) if isinstance(message, dict) else None
            if usage is not None:
                return usage
    return None


@dataclass(frozen=True, slots=True)
class ContextUsageEstimate:
    """How big the context is: reported usage plus estimates of what came after it.

    :ivar tokens: the estimate (``usage_tokens + trailing_tokens``)
    :ivar usage_tokens: tokens the last valid assistant usage reported (0 if none)
    :ivar trailing_tokens: estimates of the messages after that assistant message
    :ivar last_usage_index: index of that assistant message, or ``None``
    """

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def estimate_context_tokens(messages: Sequence[Mapping[str, object]]) -> ContextUsageEstimate:
    """Estimate the context built from ``messages`` (pass the projected context messages).

    Uses the last assistant message with valid usage and estimates only the messages after it;
    without one, estimates every message.
    """
    for index in range(len(messages) - 1, -1, -1):
        usage = get_assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = _sum_estimates(messages[index + 1 :])
            return ContextUsageEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    total = _sum_estimates(messages)
    return ContextUsageEstimate(total, 0, total, None)


def _sum_estimates(messages: Iterable[Mapping[str, object]]) -> int:
    return sum(estimate_tokens(message) for message in messages)
