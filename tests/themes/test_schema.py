"""The published JSON Schema: current with the tokens, and the built-in themes validate."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from knightcode._themes.builtin import BUILTIN_NAMES, builtin_path, builtin_spec
from knightcode._themes.loader import ThemeFileError, parse_theme
from knightcode._themes.tokens import OPTIONAL, REQUIRED
from scripts.theme_schema import SCHEMA_PATH, rendered
from tests.themes.support import valid_theme

JsonObject = dict[str, object]


def schema() -> JsonObject:
    data: JsonObject = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


def test_the_committed_schema_is_current() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == rendered(), (
        "run: python -m scripts.theme_schema"
    )


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_builtin_themes_validate_against_the_schema(name: str) -> None:
    data = json.loads(builtin_path(name).read_text(encoding="utf-8"))
    jsonschema.validate(data, schema())
    assert data["$schema"] == schema()["$id"]
    assert builtin_spec(name).name == name


def test_schema_and_loader_agree_on_tokens() -> None:
    colours = schema()["properties"]
    assert isinstance(colours, dict)
    section = colours["colors"]
    assert set(section["required"]) == REQUIRED
    assert set(section["properties"]) == REQUIRED | OPTIONAL


@pytest.mark.parametrize(
    "change",
    [{"bogus": "#ffffff"}, {"accent": 300}, {"accent": "#12345"}, {"accent": True}],
)
def test_what_the_schema_rejects_the_loader_rejects(change: JsonObject) -> None:
    data = valid_theme(**change)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema())
    with pytest.raises(ThemeFileError):
        parse_theme(data, "t.json")


def test_the_docs_example_theme_loads() -> None:
    """docs/themes.md's full example is a valid theme."""
    text = (Path(__file__).parents[2] / "docs" / "themes.md").read_text(encoding="utf-8")
    start = text.index("```json\n", text.index("## Example")) + len("```json\n")
    data = json.loads(text[start : text.index("```", start)])
    jsonschema.validate(data, schema())
    assert parse_theme(data, "docs").name == data["name"]
