"""The published keybindings.json schema: current, and in agreement with the registry's checks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from knightcode._keys.registry import KeyRegistry
from knightcode._keys.schema import SCHEMA_ID, key_pattern, keybindings_schema
from knightcode._keys.syntax import KeySyntaxError, parse_key

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "schemas" / "keybindings.schema.json"


def test_the_committed_schema_is_current() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "scripts.keybindings_schema", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(PUBLISHED.read_text()) == keybindings_schema()


def test_the_spec_and_docs_name_the_published_schema() -> None:
    spec = (REPO / "tests" / "data" / "keybindings-spec.md").read_text()
    assert f'"$schema": "{SCHEMA_ID}"' in spec
    assert SCHEMA_ID.endswith("/" + PUBLISHED.relative_to(REPO).as_posix())
    assert "schemas/keybindings.schema.json" in (REPO / "docs" / "keybindings.md").read_text()


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(keybindings_schema())


KEY_STRINGS = [
    "ctrl+x",
    "Ctrl+Shift+X",
    "shift+ctrl+p",
    "+",
    "ctrl++",
    "shift++",
    "ctrl+ctrl+x",
    "ctrl+Ctrl+x",
    "shift+alt+SHIFT+a",
    "esc",
    "RETURN",
    " pageup ",
    "ctrl + x",
    "",
    "   ",
    "super+k",
    "alt+ctrl+]",
    "ctrl+\\",
    "ctrl+foo",
    "meta+x",
    "f12",
    "f13",
    "f1x",
    "ctrl+shift+alt+super+enter",
    "ctrl+",
    "+x",
    "ctrl+a+b",
    "pageUp",
    "`",
    "ctrl+`",
]


@pytest.mark.parametrize("text", KEY_STRINGS)
def test_the_key_pattern_accepts_what_the_parser_accepts(text: str) -> None:
    try:
        parse_key(text)
        parsed = True
    except KeySyntaxError:
        parsed = False
    assert bool(re.match(key_pattern(), text)) == parsed


DOCUMENTS: list[object] = [
    {},
    {"$schema": SCHEMA_ID},
    {"$schema": 3},
    {"app.session.new": "ctrl+shift+n"},
    {"app.session.tree": ["ctrl+shift+t", "alt+shift+t"]},
    {"tui.altScreen.pageUp": []},
    {"app.session.nwe": "ctrl+n"},
    {"app.session.new": "ctrl+foo"},
    {"app.session.new": ["ctrl+n", "ctrl+foo"]},
    {"app.session.new": 5},
    {"app.session.new": None},
    {"app.session.new": [["ctrl+n"]]},
    {"app.session.new": {"key": "ctrl+n"}},
    {"app.session.new": "ctrl++"},
    [],
    "ctrl+x",
]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: json.dumps(d))
def test_schema_and_registry_agree(tmp_path: Path, document: object) -> None:
    """A document is valid under the schema exactly when the registry warns about nothing."""
    (tmp_path / "keybindings.json").write_text(json.dumps(document))
    registry = KeyRegistry(tmp_path, platform="posix")
    valid = jsonschema.Draft202012Validator(keybindings_schema()).is_valid(document)
    assert valid == (not registry.warnings), registry.warnings


def test_registry_warnings_name_the_file_and_the_action(tmp_path: Path) -> None:
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps({"app.session.new": 5, "$schema": 1}))
    warnings = KeyRegistry(tmp_path, platform="posix").warnings
    assert f"{path}: app.session.new: 5 is not a key string, ignored" in warnings
    assert f"{path}: $schema: 1 is not a string" in warnings
