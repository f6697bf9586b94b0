"""Theme files for the tests: a complete valid one to start from, written where asked."""

from __future__ import annotations

import json
from pathlib import Path

from knightcode._themes.builtin import builtin_path

JsonObject = dict[str, object]


def valid_theme(name: str = "mine", **colours: object) -> JsonObject:
    """The built-in dark theme's file renamed, with ``colours`` laid over its tokens."""
    data: JsonObject = json.loads(builtin_path("dark").read_text(encoding="utf-8"))
    data["name"] = name
    tokens = data["colors"]
    assert isinstance(tokens, dict)
    tokens.update(colours)
    return data


def write_theme(folder: Path, data: JsonObject, file: str | None = None) -> Path:
    """``data`` as ``folder/<file or name>.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (file or f"{data['name']}.json")
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def add_vars(data: JsonObject, **variables: object) -> None:
    """Add ``variables`` to the file's ``vars``."""
    table = data["vars"]
    assert isinstance(table, dict)
    table.update(variables)
