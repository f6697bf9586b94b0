"""Conversations as plain text, for summarization requests.

A summarizer that is sent the conversation as chat messages tends to *continue* it (answer the
last question, call a tool) instead of summarizing it. :func:`serialize_conversation` flattens
provider messages into labelled paragraphs the model reads as a document::

    [User]: What they said
    [Assistant]: Response text
    [Assistant tool calls]: read(path="foo.ts"); edit(path="bar.ts", ...)
    [Tool result]: Output from tool

Thinking blocks are left out: providers return summaries of the real reasoning, and replayed
thinking is often not part of the model's live context, so including it could make the request
larger than the context it summarizes. Tool results, the bulk of most contexts, are cut at
:data:`TOOL_RESULT_MAX_CHARS` characters (JavaScript string length, like every size the session
store measures) with a marker saying how much was dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from knightcode._session import jsonl
from knightcode._session.tokens import utf16_len

__all__ = ["TOOL_RESULT_MAX_CHARS", "serialize_conversation", "truncate_for_summary"]

TOOL_RESULT_MAX_CHARS = 2000
"""Longest tool result kept in a serialized conversation, in UTF-16 code units."""


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    """``text`` cut to ``max_chars`` UTF-16 units plus ``[... N more characters truncated]``.

    The cut never splits a surrogate pair (the reference's ``slice`` may; a lone surrogate would
    not survive the UTF-8 request body), so at most one unit fewer is kept in that case.
    """
    total = utf16_len(text)
    if total <= max_chars:
        return text
    if text.isascii():
        kept = text[:max_chars]
    else:
        units = text.encode("utf-16-le", "surrogatepass")[: 2 * max_chars]
        if len(units) >= 2 and 0xD8 <= units[-1] <= 0xDB:  # a high surrogate cut from its pair
            units = units[:-2]
        kept = units.decode("utf-16-le", "surrogatepass")
    dropped = total - utf16_len(kept)
    return f"{kept}\n\n[... {dropped} more characters truncated]"


def _text_blocks(content: object, separator: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        block.get("text") or ""
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _tool_call(block: Mapping[str, object]) -> str:
    arguments = block.get("arguments")
    pairs = arguments.items() if isinstance(arguments, dict) else ()
    # Each value as JSON.stringify writes it: compact, raw Unicode, key order kept.
    rendered = ", ".join(f"{key}={jsonl.dumps(value)}" for key, value in pairs)
    return f"{block.get('name', '')}({rendered})"


def _assistant(message: Mapping[str, object], parts: list[str]) -> None:
    texts: list[str] = []
    calls: list[str] = []
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(block.get("text") or "")
        elif kind == "toolCall":
            calls.append(_tool_call(block))
        # "thinking" blocks are deliberately dropped (see the module docstring).
    if texts:
        parts.append("[Assistant]: " + "\n".join(texts))
    if calls:
        parts.append("[Assistant tool calls]: " + "; ".join(calls))


def serialize_conversation(messages: Iterable[Mapping[str, object]]) -> str:
    """Render provider messages (``user``, ``assistant``, ``toolResult``) as labelled text.

    Convert agent messages first with :func:`~knightcode._session.messages.convert_to_llm`, so bash
    executions, custom messages and summaries appear as the user text the model saw. Paragraphs
    are separated by a blank line; messages without text contribute nothing.
    """
    parts: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            text = _text_blocks(message.get("content"), "")
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            _assistant(message, parts)
        elif role == "toolResult":
            text = _text_blocks(message.get("content"), "")
            if text:
                parts.append(f"[Tool result]: {truncate_for_summary(text)}")
    return "\n\n".join(parts)
