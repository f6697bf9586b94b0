"""Small pieces every tool uses: the result shape, abort checks, number formatting."""

from __future__ import annotations

import asyncio
import errno
import inspect
import math
from collections.abc import Awaitable, Callable

from knightcode._tools.context import ToolContext
from knightcode._tools.errors import OPERATION_ABORTED, ToolError
from knightcode._types.messages import ToolResult

__all__ = [
    "OnUpdate",
    "ToolResult",
    "call_update",
    "encode_utf8",
    "errno_code",
    "js_number",
    "os_error_text",
    "raise_if_aborted",
    "schedule_update",
    "text_result",
    "to_int",
]


OnUpdate = Callable[[ToolResult], object] | None
"""``on_update(partial_result)``; may be a plain function or return an awaitable."""


def text_result(text: str, details: object = None) -> ToolResult:
    """A result holding one text block."""
    return {"content": [{"type": "text", "text": text}], "details": details}


def raise_if_aborted(ctx: ToolContext) -> None:
    """Fail with the reference's "Operation aborted" once the context's signal is set."""
    if ctx.signal.aborted:
        raise ToolError(OPERATION_ABORTED)


async def call_update(on_update: OnUpdate, partial: ToolResult) -> None:
    """Deliver a partial result, awaiting the callback when it is ``async``."""
    if on_update is None:
        return
    outcome = on_update(partial)
    if inspect.isawaitable(outcome):
        await outcome


def schedule_update(
    on_update: OnUpdate, partial: ToolResult, pending: set[Awaitable[object]]
) -> None:
    """Deliver a partial result from synchronous code; an awaitable outcome is kept in
    ``pending`` so the caller can await it before returning.
    """
    if on_update is None:
        return
    outcome = on_update(partial)
    if inspect.isawaitable(outcome):
        future = asyncio.ensure_future(outcome)
        pending.add(future)
        future.add_done_callback(pending.discard)


def to_int(value: object, default: int) -> int:
    """A JSON-schema ``number`` argument as an int (JS truncation); ``default`` when absent
    (or not a number or numeric string).
    """
    if not isinstance(value, (int, float, str)) or isinstance(value, bool):
        return default
    try:
        number = float(value)
    except ValueError:
        return default
    if math.isnan(number):
        return default
    if math.isinf(number):
        return 2**62 if number > 0 else -(2**62)
    return int(number)


def js_number(value: object) -> str:
    """Format a number as JavaScript prints it (``1`` not ``1.0``), for exact reference texts."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def errno_code(error: OSError) -> str:
    """The symbolic errno name (``ENOENT``) of an ``OSError``, or ``EUNKNOWN``."""
    return errno.errorcode.get(error.errno or 0, "EUNKNOWN")


def os_error_text(error: OSError, syscall: str, path: str) -> str:
    """An ``OSError`` worded like Node's fs errors, which the reference shows the model:
    ``ENOENT: no such file or directory, open '/x'``.
    """
    code = errno_code(error)
    if error.errno == errno.EISDIR:
        return f"{code}: illegal operation on a directory, read"
    reason = (error.strerror or str(error)).lower()
    return f"{code}: {reason}, {syscall} '{path}'"


def encode_utf8(text: str) -> bytes:
    """``text`` as UTF-8, lone surrogates (possible in decoded JSON) written as U+FFFD like
    Node does, instead of failing the write.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text).encode("utf-8")
