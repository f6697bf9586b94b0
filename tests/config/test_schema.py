"""The declarative validator behind settings.json and models.json: order, unknown keys, nulls."""

from __future__ import annotations

import pytest

from knightcode._config import values
from knightcode._config.schema import (
    Checked,
    Field,
    ListOf,
    MapOf,
    Section,
    SectionOf,
    Spec,
    nested,
    nullable,
)
from knightcode._config.values import InvalidSetting

COUNT: Spec[int] = Checked(values.check_non_negative_int)
TEXT: Spec[str] = Checked(values.check_str)


class Inner(Section):
    unknown_keys = "reject"
    count = Field("count", COUNT, 1)


class Outer(Section):
    name = Field("name", TEXT)
    first_count = Field("firstCount", COUNT, 0)
    label = Field("label", nullable(TEXT), None)
    inner = nested("inner", Inner)
    items = Field("items", ListOf(SectionOf(Inner)), factory=list)
    by_name = Field("byName", MapOf(COUNT), factory=dict)


class Ignoring(Section):
    unknown_keys = "ignore"
    inner = nested("inner", Inner)


def error_of(data: object) -> tuple[str, str]:
    with pytest.raises(InvalidSetting) as info:
        Outer.parse(data)
    return values.format_key(info.value.key_parts), info.value.problem


def test_values_defaults_and_camel_case_keys() -> None:
    parsed = Outer.parse({"name": "n", "firstCount": 2, "inner": {"count": 5}, "byName": {"a": 1}})
    assert (parsed.name, parsed.first_count, parsed.label) == ("n", 2, None)
    assert parsed.inner.count == 5
    assert parsed.items == []
    assert parsed.by_name == {"a": 1}
    assert parsed.extra == {}


def test_the_first_problem_in_declaration_order_is_reported_not_the_first_in_the_file() -> None:
    assert error_of({"firstCount": -1, "name": 5}) == ("name", "expected a string, got 5")
    assert error_of({"inner": {"count": "x"}, "name": "n", "firstCount": True}) == (
        "firstCount",
        "expected a non-negative integer, got true",
    )


def test_paths_name_nested_keys_list_positions_and_map_keys() -> None:
    assert error_of({"name": "n", "items": [{}, {"count": -2}]}) == (
        "items[1].count",
        "expected a non-negative integer, got -2",
    )
    assert error_of({"name": "n", "byName": {"a": 1, "b/c": "x"}}) == (
        "byName.b/c",
        'expected a non-negative integer, got "x"',
    )
    assert error_of({"name": "n", "items": {}}) == ("items", "expected a list, got {}")
    assert error_of({"name": "n", "byName": []}) == ("byName", "expected an object, got []")
    assert error_of({"name": "n", "inner": "big"}) == ("inner", 'expected an object, got "big"')
    assert error_of(["not", "an", "object"]) == (
        "",
        'expected an object, got ["not", "an", "object"]',
    )


def test_a_missing_required_key() -> None:
    assert error_of({"firstCount": 1}) == ("name", "required")
    with pytest.raises(InvalidSetting):
        Outer()


def test_null_is_a_value_only_where_the_field_is_nullable() -> None:
    assert Outer.parse({"name": "n", "label": None}).label is None
    assert error_of({"name": "n", "firstCount": None}) == (
        "firstCount",
        "expected a non-negative integer, got null",
    )
    assert error_of({"name": "n", "inner": None}) == ("inner", "expected an object, got null")


def test_unknown_keys_are_kept_rejected_or_ignored_as_the_section_says() -> None:
    kept = Outer.parse({"myPlugin": {"colour": "red"}, "name": "n", "other": 1})
    assert kept.extra == {"myPlugin": {"colour": "red"}, "other": 1}
    assert Ignoring.parse({"$schema": "x", "inner": {}}).extra == {}
    with pytest.raises(InvalidSetting) as info:
        Ignoring.parse({"inner": {"cuont": 1, "other": 2}})
    assert (info.value.key_parts, info.value.problem) == (("inner", "cuont"), "unknown key")


def test_an_unknown_key_is_reported_only_after_every_declared_field() -> None:
    with pytest.raises(InvalidSetting) as info:
        Inner.parse({"cuont": 1, "count": -1})
    assert info.value.key_parts == ("count",)


def test_snake_case_names_are_not_read() -> None:
    parsed = Outer.parse({"name": "n", "first_count": 7})
    assert parsed.first_count == 0
    assert parsed.extra == {"first_count": 7}


def test_defaults_made_by_a_factory_are_not_shared() -> None:
    one, two = Outer.parse({"name": "a"}), Outer.parse({"name": "b"})
    one.items.append(Inner())
    one.inner.count = 9
    assert two.items == [] and two.inner.count == 1


def test_copy_json_and_equality() -> None:
    parsed = Inner.parse({"count": 4})
    clone = parsed.copy()
    clone.count = 5
    assert parsed.count == 4 and clone.to_json() == {"count": 5}
    assert parsed == Inner.parse({"count": 4}) and parsed != clone
    assert repr(parsed) == "Inner(count=4)"


def test_mistakes_in_a_table_fail_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match="factory="):
        Field("list", ListOf(TEXT), [])
    with pytest.raises(TypeError, match=r"hide Section\.extra"):

        class Hiding(Section):
            extra = Field("extra", TEXT, "")  # type: ignore[assignment]  # mypy sees it too
