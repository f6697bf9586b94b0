"""Checks for individual setting values, shared by the settings tables and the raw readers.

Each ``check_*`` function returns None for a good value or the problem text a person reads
(``expected a non-negative integer, got -1``). The same functions back the tables in
:mod:`knightcode._config.settings` and the raw readers on start-up paths (``extensions``,
``sessionDir``, compaction budgets), so a value is judged, and worded, the same way wherever it
is read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypeGuard, TypeVar

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer a JavaScript reader of the same file represents exactly."""

_DESCRIBE_LIMIT = 60

_T = TypeVar("_T")


class InvalidSetting(Exception):
    """A bad value found while reading raw settings data, before the file is known.

    :class:`knightcode._config.loading.Settings` turns it into a
    :class:`knightcode._errors.SettingsError` naming the file that supplied the value.

    :param key_parts: the JSON key path of the value (strings, or ints for list positions)
    :param problem: what is wrong with it
    """

    def __init__(self, key_parts: Sequence[str | int], problem: str) -> None:
        self.key_parts = tuple(key_parts)
        self.problem = problem
        super().__init__(f"{format_key(self.key_parts)}: {problem}")


def format_key(parts: Sequence[str | int]) -> str:
    """The dotted key a user reads: ``retry.maxRetries``; list positions as ``extensions[1]``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def expect(
    value: object,
    check: Callable[[object], str | None],
    kind: type[_T],
    key_parts: Sequence[str | int],
) -> _T:
    """``value`` when ``check`` accepts it, typed as the ``kind`` that check guarantees (a raw
    reader's way from a JSON value to a typed one: ``expect(v, check_bool, bool, key)``).

    :raises InvalidSetting: ``check``'s problem, at ``key_parts``
    """
    problem = check(value)
    if problem is None and isinstance(value, kind):
        return value
    raise InvalidSetting(key_parts, problem or f"expected {kind.__name__}, got {describe(value)}")


def describe(value: object) -> str:
    """A value as it would appear in the JSON file, shortened for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _DESCRIBE_LIMIT else text[: _DESCRIBE_LIMIT - 1] + "…"


def _is_int(value: object) -> TypeGuard[int]:
    # bool is a subclass of int; `true` is not a number in a settings file.
    return type(value) is int


def check_non_negative_int(value: object) -> str | None:
    """A token count, retry count or delay: an integer from 0 to 2**53-1 (no floats, no strings)."""
    if not _is_int(value) or value < 0:
        return f"expected a non-negative integer, got {describe(value)}"
    if value > MAX_SAFE_INTEGER:
        return f"expected a non-negative integer no larger than {MAX_SAFE_INTEGER}, got {value}"
    return None


def check_int_range(value: object, low: int, high: int) -> str | None:
    """An integer between ``low`` and ``high`` inclusive."""
    if not _is_int(value) or not low <= value <= high:
        return f"expected an integer from {low} to {high}, got {describe(value)}"
    return None


def check_bool(value: object) -> str | None:
    """A JSON boolean."""
    return None if isinstance(value, bool) else f"expected true or false, got {describe(value)}"


def check_str(value: object) -> str | None:
    """A JSON string."""
    return None if isinstance(value, str) else f"expected a string, got {describe(value)}"


def check_object(value: object) -> str | None:
    """A JSON object."""
    return None if isinstance(value, dict) else f"expected an object, got {describe(value)}"


def check_choice(value: object, choices: Sequence[str]) -> str | None:
    """One of a fixed set of strings."""
    if isinstance(value, str) and value in choices:
        return None
    listed = ", ".join(f'"{choice}"' for choice in choices)
    return f"expected one of {listed}, got {describe(value)}"


def check_str_list(value: object) -> str | None:
    """A JSON array of strings; the message points at the first item that is not one."""
    if not isinstance(value, list):
        return f"expected a list of strings, got {describe(value)}"
    for index, item in enumerate(value):
        if not isinstance(item, str):
            return f"expected a list of strings, but item {index} is {describe(item)}"
    return None


def check_packages(value: object) -> str | None:
    """``packages``: a list whose items are source strings or objects with a ``source`` string."""
    if not isinstance(value, list):
        return f"expected a list of package sources, got {describe(value)}"
    for index, item in enumerate(value):
        if isinstance(item, str):
            continue
        if isinstance(item, dict) and isinstance(item.get("source"), str):
            continue
        return (
            f'expected a package source string or an object with a "source" string, '
            f"but item {index} is {describe(item)}"
        )
    return None
