"""Checking tool-call arguments against the tool's JSON schema before the tool runs.

Models make small type slips ("10" for 10, "true" for true); like the reference tool we coerce
those where the schema is unambiguous and reject everything else with a message the model can
act on. Only the schema features tool definitions use are supported: type (incl. lists of
types), properties, required, additionalProperties, items, enum, const, anyOf/oneOf, minimum/
maximum, minLength/maxLength, minItems/maxItems.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TypeGuard


class ArgumentError(ValueError):
    """Arguments that do not match the schema; the message lists every problem."""


def _is_number(value: object) -> TypeGuard[int | float]:
    """A JSON number: an int or a float, but not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _anything(value: object) -> bool:
    return True


_TYPE_CHECKS: dict[str, Callable[[object], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _type_check(wanted: object) -> Callable[[object], bool]:
    """The test for a schema ``type`` name; a name this validator does not know accepts all."""
    return _TYPE_CHECKS.get(wanted, _anything) if isinstance(wanted, str) else _anything


def _sequence(value: object) -> Sequence[object]:
    """A schema keyword's list (``required``, ``enum``, ``anyOf`` …); anything else is empty."""
    return value if isinstance(value, (list, tuple)) else ()


def _coerce(value: object, wanted: object) -> object:
    """A value converted to ``wanted`` when that is lossless and obvious, else ``value``."""
    if isinstance(value, str):
        text = value.strip()
        if wanted == "integer":
            try:
                return int(text)
            except ValueError:
                return value
        if wanted == "number":
            try:
                number = float(text)
            except ValueError:
                return value
            return (
                int(number)
                if number.is_integer() and "." not in text and "e" not in text.lower()
                else number
            )
        if wanted == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if (wanted == "object" or wanted == "array") and text[:1] in "{[":
            try:
                parsed: object = json.loads(text)
            except ValueError:
                return value
            return parsed if _TYPE_CHECKS[wanted](parsed) else value
    if wanted == "number" and isinstance(value, float) and value.is_integer():
        return value
    if wanted == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if wanted == "string" and _is_number(value):
        return str(value)
    return value


def _describe(value: object) -> str:
    text = (
        json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else json.dumps(value)
    )
    return text if len(text) <= 60 else text[:57] + "..."


def validate(value: object, schema: object, path: str, problems: list[str]) -> object:
    """Validate (and coerce) ``value`` against ``schema``; returns the possibly coerced value and
    appends each problem, prefixed by its ``path``, to ``problems``. A ``schema`` that is not a
    non-empty dict accepts everything.
    """
    if not isinstance(schema, dict) or not schema:
        return value
    rules: Mapping[str, object] = schema
    for key in ("anyOf", "oneOf"):
        if key in rules:
            for option in _sequence(rules[key]):
                attempt: list[str] = []
                result = validate(value, option, path, attempt)
                if not attempt:
                    return result
            problems.append(f"{path}: {_describe(value)} matches none of the allowed forms")
            return value
    wanted = rules.get("type")
    if wanted is not None:
        types = wanted if isinstance(wanted, list) else [wanted]
        if not any(_type_check(t)(value) for t in types):
            for t in types:
                coerced = _coerce(value, t)
                if _type_check(t)(coerced):
                    value = coerced
                    break
            else:
                expected = " or ".join(map(str, types))
                problems.append(f"{path}: expected {expected}, got {_describe(value)}")
                return value
    if "enum" in rules:
        allowed = _sequence(rules["enum"])
        if value not in allowed:
            choices = ", ".join(_describe(v) for v in allowed)
            problems.append(f"{path}: must be one of {choices}; got {_describe(value)}")
    if "const" in rules and value != rules["const"]:
        problems.append(f"{path}: must be {_describe(rules['const'])}")
    if _is_number(value):
        minimum, maximum = rules.get("minimum"), rules.get("maximum")
        if isinstance(minimum, (int, float)) and value < minimum:
            problems.append(f"{path}: must be at least {minimum}")
        if isinstance(maximum, (int, float)) and value > maximum:
            problems.append(f"{path}: must be at most {maximum}")
    if isinstance(value, str):
        min_length, max_length = rules.get("minLength"), rules.get("maxLength")
        if _is_number(min_length) and len(value) < min_length:
            problems.append(f"{path}: must be at least {min_length} characters")
        if _is_number(max_length) and len(value) > max_length:
            problems.append(f"{path}: must be at most {max_length} characters")
    if isinstance(value, list):
        min_items, max_items = rules.get("minItems"), rules.get("maxItems")
        if _is_number(min_items) and len(value) < min_items:
            problems.append(f"{path}: needs at least {min_items} items")
        if _is_number(max_items) and len(value) > max_items:
            problems.append(f"{path}: takes at most {max_items} items")
        items = rules.get("items")
        if isinstance(items, dict):
            value = [
                validate(item, items, f"{path}[{index}]", problems)
                for index, item in enumerate(value)
            ]
    if isinstance(value, dict):
        value = _validate_object(value, rules, path, problems)
    return value


def _validate_object(
    value: Mapping[str, object], schema: Mapping[str, object], path: str, problems: list[str]
) -> dict[str, object]:
    properties = schema.get("properties")
    known: Mapping[str, object] = properties if isinstance(properties, dict) else {}
    for name in _sequence(schema.get("required")):
        if name not in value:
            problems.append(f"{path}.{name}: required" if path else f"{name}: required")
    result = dict(value)
    additional = schema.get("additionalProperties")
    for name, item in value.items():
        where = f"{path}.{name}" if path else name
        if name in known:
            result[name] = validate(item, known[name], where, problems)
        elif additional is False:
            problems.append(f"{where}: not an allowed argument")
        elif isinstance(additional, dict):
            result[name] = validate(item, additional, where, problems)
    return result


def validate_arguments(
    tool_name: str, arguments: object, schema: Mapping[str, object]
) -> dict[str, object]:
    """The tool call's arguments, validated and coerced.

    :raises ArgumentError: with a message naming the tool and every problem found
    """
    problems: list[str] = []
    if not isinstance(arguments, dict):
        raise ArgumentError(
            f"Invalid arguments for tool {tool_name}: expected an object, "
            f"got {_describe(arguments)}"
        )
    result = validate(arguments, schema or {}, "", problems)
    if problems:
        raise ArgumentError(f"Invalid arguments for tool {tool_name}: " + "; ".join(problems))
    if not isinstance(result, dict):  # coercion never turns an object into anything else
        raise ArgumentError(f"Invalid arguments for tool {tool_name}: expected an object")
    return result
