"""The JSON Schema of theme files, built from :mod:`.tokens` (published as
``schemas/theme.schema.json``; ``python -m scripts.theme_schema`` writes it).
"""

from __future__ import annotations

from knightcode._themes.tokens import TOKENS

__all__ = ["SCHEMA_ID", "theme_schema"]

SCHEMA_ID = "https://knightcode.dev/schemas/theme.schema.json"

JsonValue = str | int | bool | list["JsonValue"] | dict[str, "JsonValue"]

_COLOUR: dict[str, JsonValue] = {
    "oneOf": [
        {
            "type": "string",
            "pattern": "^(#[0-9a-fA-F]{6}|[A-Za-z_][A-Za-z0-9_.-]*|)$",
            "description": '"#rrggbb", the name of a vars entry, or "" (the terminal\'s colour)',
        },
        {"type": "integer", "minimum": 0, "maximum": 255, "description": "xterm palette index"},
    ]
}


def theme_schema() -> dict[str, JsonValue]:
    """The schema (draft 2020-12): required and optional tokens, no others."""
    colour_ref: dict[str, JsonValue] = {"$ref": "#/$defs/colour"}
    tokens: dict[str, JsonValue] = {
        token.name: {**colour_ref, "description": token.description} for token in TOKENS
    }
    export: dict[str, JsonValue] = {
        name: {**colour_ref, "description": f"HTML export: {name} (unused)"}
        for name in ("pageBg", "cardBg", "infoBg")
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "knightcode theme",
        "description": "A knightcode theme file (docs/themes.md). The reference's format: "
        "colour tokens for every UI role, optionally through named vars.",
        "type": "object",
        "required": ["name", "colors"],
        "additionalProperties": False,
        "properties": {
            "$schema": {"type": "string"},
            "name": {"type": "string", "minLength": 1, "description": "The theme's name"},
            "vars": {
                "type": "object",
                "description": "Named colours that tokens (and other vars) may refer to",
                "additionalProperties": colour_ref,
            },
            "colors": {
                "type": "object",
                "description": "Every required token; optional ones may be left out",
                "required": [token.name for token in TOKENS if token.required],
                "additionalProperties": False,
                "properties": tokens,
            },
            "export": {
                "type": "object",
                "description": "The reference's HTML export colours (accepted, unused)",
                "additionalProperties": False,
                "properties": export,
            },
        },
        "$defs": {"colour": _COLOUR},
    }
