"""Checking the fields of entries that reach the model, where the context is built.

Loading trusts only that each entry is a JSON object with a string ``type`` (see
:mod:`knightcode._session.loading`). An entry of the right type with a wrong field type — a
compaction whose ``summary`` is ``7``, an assistant message whose ``content`` is ``5``, a text
block without ``text`` — would otherwise fail every prompt deep inside a provider client or the
token estimate. :func:`entry_problem` names what is wrong, so the context leaves the entry out
with a warning naming its id, and the file keeps it untouched.

Only the entries on the current path are checked, when the context is built: a session of
100 000 entries pays for the path it uses, once per build. The checks are the fields the
consumers index or iterate (the required fields of the ``TypedDict`` shapes in
:mod:`knightcode._types.messages`); unknown block types and roles are allowed, as readers skip
them, and so are odd ``usage`` counts, which readers take with ``.get()`` and as 0 when they are
not numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["entry_problem", "message_problem", "plain_blocks"]

_NUMBER = (int, float)


def _block_problem(block: object, where: str) -> str | None:
    # One content block; ``where`` names the message field for the warning.
    if type(block) is not dict:
        return f"{where} holds a block that is not an object"
    kind = block.get("type")
    if kind == "text":
        if type(block.get("text")) is not str:
            return f"{where} has a text block without a string 'text'"
    elif kind == "toolCall":
        if type(block.get("id")) is not str or type(block.get("name")) is not str:
            return f"{where} has a tool call without a string 'id' and 'name'"
        if type(block.get("arguments")) is not dict:
            return f"{where} has a tool call whose 'arguments' is not an object"
    elif kind == "thinking":
        if type(block.get("thinking")) is not str:
            return f"{where} has a thinking block without a string 'thinking'"
    elif kind == "image":
        if type(block.get("data")) is not str or type(block.get("mimeType")) is not str:
            return f"{where} has an image block without a string 'data' and 'mimeType'"
    elif type(kind) is not str:
        return f"{where} has a block without a string 'type'"
    return None


def _content_problem(content: object, where: str, *, text_allowed: bool) -> str | None:
    # The slow path: only reached when the quick checks in message_problem did not pass.
    if type(content) is str and text_allowed:
        return None
    if type(content) is not list:
        expected = "a string or a list" if text_allowed else "a list"
        return f"{where} is not {expected}" if content is not None else f"{where} is missing"
    for block in content:
        problem = _block_problem(block, where)
        if problem is not None:
            return problem
    return None


def plain_blocks(content: Sequence[object]) -> bool:
    """The quick check of a content list: every block a text, thinking or tool-call block with
    its fields of the right types (``False`` sends the caller to :func:`message_problem`).

    One loop and no calls: the loader runs it for every message of a file, 100 000 of them for
    a long session.
    """
    for block in content:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        if kind == "text":
            if type(block.get("text")) is not str:
                return False
        elif kind == "toolCall":
            if (
                type(block.get("arguments")) is not dict
                or type(block.get("name")) is not str
                or type(block.get("id")) is not str
            ):
                return False
        elif kind != "thinking" or type(block.get("thinking")) is not str:
            return False  # an image or another type: the slow path decides
    return True


def _str_field(message: Mapping[str, object], role: str, key: str) -> str | None:
    value = message.get(key)
    return None if type(value) is str else f"{role} '{key}' is not a string"


def message_problem(message: object) -> str | None:
    """What makes ``message`` unusable in a context, or ``None`` when it is usable."""
    if type(message) is not dict:
        return "'message' is not an object"
    role = message.get("role")
    content = message.get("content")
    if role == "assistant":
        if type(content) is list and plain_blocks(content):
            return None
        return _content_problem(content, "assistant 'content'", text_allowed=False)
    if role == "user":
        if type(content) is str:
            return None
        return _content_problem(content, "user 'content'", text_allowed=True)
    if role == "toolResult":
        if type(content) is list and plain_blocks(content):
            return None
        return _content_problem(content, "toolResult 'content'", text_allowed=False)
    if role == "custom":
        return _content_problem(content, "custom 'content'", text_allowed=True)
    if role == "bashExecution":
        return _str_field(message, "bashExecution", "command") or _optional_str(
            message, "bashExecution", "output"
        )
    if role == "branchSummary" or role == "compactionSummary":
        return _str_field(message, role, "summary")
    if type(role) is not str:
        return "'message.role' is not a string"
    return None


def _optional_str(entry: Mapping[str, object], name: str, key: str) -> str | None:
    value = entry.get(key)
    return None if value is None or type(value) is str else f"{name} '{key}' is not a string"


def entry_problem(entry: Mapping[str, object]) -> str | None:
    """What makes ``entry`` unusable in a context, or ``None`` (also for types the context
    ignores).
    """
    kind = entry.get("type")
    if kind == "message":
        return message_problem(entry.get("message"))
    if kind == "compaction":
        tokens = entry.get("tokensBefore")
        if tokens is not None and not isinstance(tokens, _NUMBER):
            return "compaction 'tokensBefore' is not a number"
        return _str_field(entry, "compaction", "summary") or _optional_str(
            entry, "compaction", "firstKeptEntryId"
        )
    if kind == "custom_message":
        return _content_problem(
            entry.get("content"), "custom_message 'content'", text_allowed=True
        ) or _optional_str(entry, "custom_message", "customType")
    if kind == "branch_summary":
        return _optional_str(entry, "branch_summary", "summary") or _optional_str(
            entry, "branch_summary", "fromId"
        )
    if kind == "thinking_level_change":
        return _optional_str(entry, "thinking_level_change", "thinkingLevel")
    if kind == "model_change":
        return _optional_str(entry, "model_change", "provider") or _optional_str(
            entry, "model_change", "modelId"
        )
    return None
