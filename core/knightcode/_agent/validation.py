"""Checking tool-call arguments against the tool's JSON schema before the tool runs.

Models make small type slips ("10" for 10, "true" for true); like the reference tool we coerce
those where the schema is unambiguous and reject everything else with a message the model can
act on. Only the schema features tool definitions use are supported: type (incl. lists of
types), properties, required, additionalProperties, items, enum, const, anyOf/oneOf, minimum/
maximum, minLength/maxLength, minItems/maxItems.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class ArgumentError(ValueError):
    """Arguments that do not match the schema; the message lists every problem."""


_TYPE_CHECKS: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _coerce(value: Any, wanted: str) -> Any:
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
        if wanted in ("object", "array") and text[:1] in "{[":
            try:
                parsed = json.loads(text)
            except ValueError:
                return value
            return parsed if _TYPE_CHECKS[wanted](parsed) else value
    if wanted == "number" and isinstance(value, float) and value.is_integer():
        return value
    if wanted == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if wanted == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _describe(value: Any) -> str:
    text = (
        json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else json.dumps(value)
    )
    return text if len(text) <= 60 else text[:57] + "..."


def validate(value: Any, schema: Mapping[str, Any], path: str, problems: list[str]) -> Any:
    """Validate (and coerce) ``value`` against ``schema``; returns the possibly coerced value and
    appends each problem, prefixed by its ``path``, to ``problems``.
    """
    if not isinstance(schema, dict) or not schema:
        return value
    for key in ("anyOf", "oneOf"):
        if key in schema:
            for option in schema[key]:
                attempt: list[str] = []
                result = validate(value, option, path, attempt)
                if not attempt:
                    return result
            problems.append(f"{path}: {_describe(value)} matches none of the allowed forms")
            return value
    wanted = schema.get("type")
    if wanted is not None:
        types = wanted if isinstance(wanted, list) else [wanted]
        if not any(_TYPE_CHECKS.get(t, lambda v: True)(value) for t in types):
            for t in types:
                coerced = _coerce(value, t)
                if _TYPE_CHECKS.get(t, lambda v: True)(coerced):
                    value = coerced
                    break
            else:
                problems.append(f"{path}: expected {' or '.join(types)}, got {_describe(value)}")
                return value
    if "enum" in schema and value not in schema["enum"]:
        problems.append(
            f"{path}: must be one of {', '.join(_describe(v) for v in schema['enum'])}; got {_describe(value)}"
        )
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: must be {_describe(schema['const'])}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path}: must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path}: must be at most {schema['maximum']}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{path}: must be at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{path}: must be at most {schema['maxLength']} characters")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(f"{path}: needs at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{path}: takes at most {schema['maxItems']} items")
        items = schema.get("items")
        if isinstance(items, dict):
            value = [
                validate(item, items, f"{path}[{index}]", problems)
                for index, item in enumerate(value)
            ]
    if isinstance(value, dict):
        value = _validate_object(value, schema, path, problems)
    return value


def _validate_object(
    value: dict[str, Any], schema: dict[str, Any], path: str, problems: list[str]
) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in value:
            problems.append(f"{path}.{name}: required" if path else f"{name}: required")
    result = dict(value)
    for name, item in value.items():
        where = f"{path}.{name}" if path else name
        if name in properties:
            result[name] = validate(item, properties[name], where, problems)
        elif schema.get("additionalProperties") is False:
            problems.append(f"{where}: not an allowed argument")
        elif isinstance(schema.get("additionalProperties"), dict):
            result[name] = validate(item, schema["additionalProperties"], where, problems)
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
            f"Invalid arguments for tool {tool_name}: expected an object, got {_describe(arguments)}"
        )
    result = validate(arguments, schema or {}, "", problems)
    if problems:
        raise ArgumentError(f"Invalid arguments for tool {tool_name}: " + "; ".join(problems))
    return result  # type: ignore[no-any-return]
