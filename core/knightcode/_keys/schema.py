"""The JSON Schema of ``keybindings.json``, built from the action table.

Published as ``schemas/keybindings.schema.json`` (the ``$schema`` URL
``https://knightcode.dev/schemas/keybindings.schema.json`` names that path), so editors complete
action ids and flag typos while the user types. ``scripts/keybindings_schema.py`` writes the file
and ``tests/keys/test_schema.py`` fails when it is stale.

knightcode itself does not load a JSON Schema validator at start-up (it would cost more than
reading the file): :class:`knightcode._keys.registry.KeyRegistry` checks the same rules by hand
and turns each violation into a warning naming the file and the action; the test runs both over
a table of documents and requires them to agree.
"""

from __future__ import annotations

import re

from knightcode._keys.actions import ACTIONS
from knightcode._keys.syntax import _ALIASES, KEYS, MODIFIERS

__all__ = ["SCHEMA_ID", "key_pattern", "keybindings_schema"]

SCHEMA_ID = "https://knightcode.dev/schemas/keybindings.schema.json"

JsonValue = str | int | bool | None | list["JsonValue"] | dict[str, "JsonValue"]


def _any_case(word: str) -> str:
    """``ctrl`` → ``[cC][tT][rR][lL]``: ECMA-262 patterns have no case-insensitive flag."""
    return "".join(
        f"[{c.lower()}{c.upper()}]" if c.lower() != c.upper() else re.escape(c) for c in word
    )


def key_pattern() -> str:
    """A regular expression (ECMA-262 and Python alike) matching exactly the key strings
    :func:`knightcode._keys.syntax.parse_key` accepts: modifiers in any order, each once, any
    case, a key name or alias last, surrounding white space allowed.
    """
    # ``+`` is a key only on its own (``ctrl++`` is an error), hence its own alternative.
    names = sorted({*KEYS, *_ALIASES} - {"+"}, key=lambda n: (-len(n), n))
    key = "|".join(_any_case(name) for name in names)
    modifier = "|".join(_any_case(m) for m in MODIFIERS)
    once = "".join(
        f"(?!\\s*(?:(?:{modifier})\\+)*{_any_case(m)}\\+(?:(?:{modifier})\\+)*{_any_case(m)}\\+)"
        for m in MODIFIERS
    )
    return f"^{once}\\s*(?:\\+|(?:(?:{modifier})\\+)*(?:{key}))\\s*$"


def keybindings_schema() -> dict[str, JsonValue]:
    """The schema document: one optional property per action, a key or a list of keys."""
    key_ref: dict[str, JsonValue] = {"$ref": "#/$defs/key"}
    value: dict[str, JsonValue] = {
        "anyOf": [key_ref, {"type": "array", "items": key_ref}],
    }
    properties: dict[str, JsonValue] = {
        "$schema": {"type": "string", "description": "This schema's URL, for editors."}
    }
    for action in ACTIONS:
        # Linux/macOS defaults: the published file must not depend on where it was written.
        defaults = ", ".join(action.defaults("posix")) or "none"
        properties[action.id] = {
            **value,
            "description": f"{action.description} (default: {defaults})",
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "knightcode keybindings.json",
        "description": (
            "Keys for the actions of knightcode's interactive mode. A value replaces the "
            "action's defaults; [] unbinds it. See docs/keybindings.md."
        ),
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        "$defs": {
            "key": {
                "type": "string",
                "description": "modifier+…+key, e.g. ctrl+shift+x (docs/keybindings.md)",
                "pattern": key_pattern(),
            }
        },
    }
