"""``knightcode._agent.validation``: tool arguments checked (and obvious slips coerced) against the
tool's JSON schema before the tool runs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from knightcode._agent.validation import ArgumentError, validate_arguments


def obj(
    properties: dict[str, Any], required: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required is not None:
        schema["required"] = required
    return schema


def check(schema: dict[str, Any], arguments: Any) -> Any:
    return validate_arguments("probe", arguments, schema)


def problem(schema: dict[str, Any], arguments: Any) -> str:
    with pytest.raises(ArgumentError) as raised:
        check(schema, arguments)
    text = str(raised.value)
    assert text.startswith("Invalid arguments for tool probe: ")
    return text.removeprefix("Invalid arguments for tool probe: ")


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("string", "text", [True, None, [], {}]),
        ("integer", 3, [3.5, True, None, "x", [], {}]),
        ("number", 2.5, [False, None, "x", [], {}]),
        ("boolean", False, [0, None, "yes", [], {}]),
        ("null", None, [0, "", False]),
        ("object", {"a": 1}, [[], "x", 1]),
        ("array", [1, "a"], [{}, "x", 1]),
    ],
)
def test_types(kind: str, good: Any, bad: list[Any]) -> None:
    schema = obj({"v": {"type": kind}})
    assert check(schema, {"v": good}) == {"v": good}
    for value in bad:
        assert problem(schema, {"v": value}).startswith(f"v: expected {kind}, got ")


def test_integers_are_numbers_but_booleans_are_not() -> None:
    assert check(obj({"v": {"type": "number"}}), {"v": 4}) == {"v": 4}
    assert "expected integer, got true" in problem(obj({"v": {"type": "integer"}}), {"v": True})


@pytest.mark.parametrize(
    ("kind", "given", "expected"),
    [
        ("integer", "10", 10),
        ("integer", " 7 ", 7),
        ("integer", "-3", -3),
        ("integer", 4.0, 4),
        ("number", "2.5", 2.5),
        ("number", "3", 3),
        ("number", "1e3", 1000.0),
        ("boolean", "true", True),
        ("boolean", "FALSE", False),
        ("string", 42, "42"),
        ("string", 1.5, "1.5"),
        ("object", '{"a": 1}', {"a": 1}),
        ("array", "[1, 2]", [1, 2]),
    ],
)
def test_coercions(kind: str, given: Any, expected: Any) -> None:
    result = check(obj({"v": {"type": kind}}), {"v": given})
    assert result == {"v": expected}
    assert type(result["v"]) is type(expected)


@pytest.mark.parametrize(
    ("kind", "given"),
    [
        ("integer", "ten"),
        ("integer", "2.5"),
        ("integer", 2.5),
        ("number", "lots"),
        ("boolean", "yes"),
        ("boolean", 1),
        ("object", "[1]"),
        ("object", "{broken"),
        ("array", '{"a": 1}'),
        ("string", True),
    ],
)
def test_no_coercion_when_it_would_guess(kind: str, given: Any) -> None:
    assert problem(obj({"v": {"type": kind}}), {"v": given}).startswith(f"v: expected {kind}")


def test_type_lists_accept_any_listed_type() -> None:
    schema = obj({"v": {"type": ["string", "null"]}})
    assert check(schema, {"v": None}) == {"v": None}
    assert check(schema, {"v": "s"}) == {"v": "s"}
    assert check(schema, {"v": 5}) == {"v": "5"}
    assert "expected integer or boolean" in problem(
        obj({"v": {"type": ["integer", "boolean"]}}), {"v": "x"}
    )


def test_required_fields() -> None:
    schema = obj(
        {"path": {"type": "string"}, "limit": {"type": "integer"}}, required=["path", "limit"]
    )
    assert problem(schema, {}) == "path: required; limit: required"
    assert problem(schema, {"path": "a"}) == "limit: required"
    assert check(schema, {"path": "a", "limit": "5"}) == {"path": "a", "limit": 5}


def test_enum_and_const() -> None:
    schema = obj({"mode": {"type": "string", "enum": ["fast", "slow"]}, "kind": {"const": "edit"}})
    assert check(schema, {"mode": "fast", "kind": "edit"}) == {"mode": "fast", "kind": "edit"}
    assert (
        problem(schema, {"mode": "medium"}) == 'mode: must be one of "fast", "slow"; got "medium"'
    )
    assert problem(schema, {"kind": "read"}) == 'kind: must be "edit"'


def test_additional_properties() -> None:
    closed = obj({"a": {"type": "string"}}, additionalProperties=False)
    assert check(closed, {"a": "x"}) == {"a": "x"}
    assert problem(closed, {"a": "x", "b": 1}) == "b: not an allowed argument"
    typed = obj({}, additionalProperties={"type": "integer"})
    assert check(typed, {"x": "3", "y": 4}) == {"x": 3, "y": 4}
    assert problem(typed, {"x": "three"}).startswith("x: expected integer")
    open_schema = obj({"a": {"type": "string"}})
    assert check(open_schema, {"a": "x", "anything": [1]}) == {"a": "x", "anything": [1]}


def test_nested_objects_and_arrays_report_paths_and_coerce() -> None:
    schema = obj(
        {
            "edits": {
                "type": "array",
                "minItems": 1,
                "items": obj(
                    {
                        "oldText": {"type": "string"},
                        "newText": {"type": "string"},
                        "line": {"type": "integer"},
                    },
                    required=["oldText", "newText"],
                    additionalProperties=False,
                ),
            },
            "options": obj({"depth": {"type": "integer", "minimum": 0}}, required=["depth"]),
        },
        required=["edits"],
    )
    good = {"edits": [{"oldText": "a", "newText": "b", "line": "3"}], "options": {"depth": "2"}}
    assert check(schema, good) == {
        "edits": [{"oldText": "a", "newText": "b", "line": 3}],
        "options": {"depth": 2},
    }
    text = problem(
        schema,
        {
            "edits": [{"oldText": "a"}, {"oldText": "a", "newText": False, "extra": True}],
            "options": {},
        },
    )
    assert text.split("; ") == [
        "edits[0].newText: required",
        "edits[1].newText: expected string, got false",
        "edits[1].extra: not an allowed argument",
        "options.depth: required",
    ]
    assert problem(schema, {"edits": []}) == "edits: needs at least 1 items"
    assert (
        problem(schema, {"edits": [{"oldText": "a", "newText": "b"}], "options": {"depth": -1}})
        == "options.depth: must be at least 0"
    )


def test_arrays_of_scalars_coerce_each_item() -> None:
    schema = obj({"ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 3}})
    assert check(schema, {"ids": ["1", 2, "3"]}) == {"ids": [1, 2, 3]}
    assert problem(schema, {"ids": ["1", "x"]}) == 'ids[1]: expected integer, got "x"'
    assert problem(schema, {"ids": [1, 2, 3, 4]}) == "ids: takes at most 3 items"
    # A JSON text for the whole array is parsed, then its items checked.
    assert check(schema, {"ids": '["4", 5]'}) == {"ids": [4, 5]}


def test_any_of_and_one_of() -> None:
    schema = obj(
        {
            "limit": {
                "anyOf": [{"type": "string", "enum": ["all"]}, {"type": "integer", "minimum": 1}]
            }
        }
    )
    assert check(schema, {"limit": "all"}) == {"limit": "all"}
    assert check(schema, {"limit": 5}) == {"limit": 5}
    assert check(schema, {"limit": "5"}) == {"limit": 5}  # the integer form, coerced
    assert problem(schema, {"limit": 0}) == "limit: 0 matches none of the allowed forms"
    assert problem(schema, {"limit": "some"}) == 'limit: "some" matches none of the allowed forms'
    one = obj(
        {"v": {"oneOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}}]}}
    )
    assert check(one, {"v": ["a"]}) == {"v": ["a"]}
    assert check(one, {"v": "true"}) == {"v": True}
    assert "matches none of the allowed forms" in problem(one, {"v": [True]})


def test_string_and_number_bounds() -> None:
    schema = obj(
        {
            "name": {"type": "string", "minLength": 2, "maxLength": 4},
            "n": {"type": "number", "minimum": 1, "maximum": 10},
        }
    )
    assert check(schema, {"name": "abc", "n": "10"}) == {"name": "abc", "n": 10}
    assert problem(schema, {"name": "a"}) == "name: must be at least 2 characters"
    assert problem(schema, {"name": "abcde"}) == "name: must be at most 4 characters"
    assert problem(schema, {"n": 0.5}) == "n: must be at least 1"
    assert problem(schema, {"n": "11"}) == "n: must be at most 10"


def test_every_problem_is_listed_and_long_values_are_shortened() -> None:
    schema = obj({"a": {"type": "integer"}, "b": {"type": "boolean"}}, required=["c"])
    text = problem(schema, {"a": "x" * 100, "b": "maybe"})
    parts = text.split("; ")
    assert parts[0] == "c: required"
    assert (
        parts[1].startswith('a: expected integer, got "xxxx')
        and parts[1].endswith("...")
        and len(parts[1]) < 100
    )
    assert parts[2] == 'b: expected boolean, got "maybe"'


def test_arguments_must_be_an_object() -> None:
    values: list[Any] = [[], "text", None, 3]
    for value in values:
        with pytest.raises(
            ArgumentError, match="Invalid arguments for tool probe: expected an object"
        ):
            check(obj({}), value)


def test_empty_schema_accepts_anything_and_input_is_not_mutated() -> None:
    assert check({}, {"x": [1, {"y": "z"}]}) == {"x": [1, {"y": "z"}]}
    schema = obj(
        {
            "outer": obj({"n": {"type": "integer"}}),
            "list": {"type": "array", "items": {"type": "integer"}},
        }
    )
    given = {"outer": {"n": "1"}, "list": ["2"]}
    before = copy.deepcopy(given)
    assert check(schema, given) == {"outer": {"n": 1}, "list": [2]}
    assert given == before


def test_argument_error_is_a_value_error() -> None:
    assert issubclass(ArgumentError, ValueError)
