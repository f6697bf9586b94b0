"""The action table matches spec/keybindings.md exactly, so that drift in either is caught.

The spec is copied to ``tests/data/keybindings-spec.md`` (the project must not need the shared
spec at run time); when the spec changes, copy it again and this test says what to update.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from knightcode._keys.actions import ACTIONS, ACTIONS_BY_ID, Action
from knightcode._keys.syntax import canonical

SPEC = Path(__file__).parent.parent / "data" / "keybindings-spec.md"


@dataclass(frozen=True)
class SpecRow:
    id: str
    section: str
    posix: tuple[str, ...]
    windows: tuple[str, ...]
    wsl: tuple[str, ...]
    description: str


def _keys(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"`([^`]+)`", text))


def _defaults(cell: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(posix, windows, wsl) keys of one Default cell, e.g.
    ``ctrl+-`` (``ctrl+z`` on Windows; ``alt+z`` on WSL) or `ctrl+z` (None on Windows)."""
    main, _, note = cell.partition(" (")
    posix = () if main.strip() == "None" else _keys(main)
    windows = wsl = posix
    for clause in note.rstrip(")").split(";"):
        if not clause.strip():
            continue
        keys = () if clause.strip().startswith("None") else _keys(clause)
        where = clause.rpartition(" on ")[2]
        assert "Windows" in where or "WSL" in where, f"unparsed platform note: {clause!r}"
        if "Windows" in where:
            windows = keys
        if "WSL" in where:
            wsl = keys
    return posix, windows, wsl


def spec_rows(text: str) -> list[SpecRow]:
    rows: list[SpecRow] = []
    section = ""
    for line in text.splitlines():
        heading = re.match(r"#{3,4} (.+)", line)
        if heading:
            section = heading.group(1).strip()
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not re.fullmatch(r"`[a-zA-Z.]+`", cells[0]):
            continue
        posix, windows, wsl = _defaults(cells[1])
        rows.append(SpecRow(cells[0].strip("`"), section, posix, windows, wsl, cells[2]))
    return rows


def table_row(action: Action) -> SpecRow:
    return SpecRow(
        action.id,
        action.section,
        action.defaults("posix"),
        action.defaults("windows"),
        action.defaults("wsl"),
        action.description,
    )


def test_the_table_matches_the_spec() -> None:
    expected = spec_rows(SPEC.read_text(encoding="utf-8"))
    assert len(expected) == 92  # the spec lists 92 actions; a parser that finds none must fail
    assert [table_row(action) for action in ACTIONS] == expected


def test_parser_reads_platform_notes() -> None:
    assert _defaults("`ctrl+-` (`ctrl+z` on Windows; `alt+z` on WSL)") == (
        ("ctrl+-",),
        ("ctrl+z",),
        ("alt+z",),
    )
    assert _defaults("`ctrl+z` (None on Windows)") == (("ctrl+z",), (), ("ctrl+z",))
    assert _defaults("None") == ((), (), ())
    assert _defaults("`ctrl+shift+up`, `ctrl+up` (`ctrl+up` only on Windows and WSL)") == (
        ("ctrl+shift+up", "ctrl+up"),
        ("ctrl+up",),
        ("ctrl+up",),
    )


def test_ids_are_unique_and_defaults_parse() -> None:
    assert len(ACTIONS_BY_ID) == len(ACTIONS)
    for action in ACTIONS:
        assert action.contexts, action.id
        for platform in ("posix", "windows", "wsl"):
            for key in action.defaults(platform):
                canonical(key)


@pytest.mark.parametrize(
    ("action", "platform", "keys"),
    [
        ("app.suspend", "windows", ()),
        ("app.suspend", "wsl", ("ctrl+z",)),
        ("tui.editor.undo", "posix", ("ctrl+-",)),
        ("app.clipboard.pasteImage", "wsl", ("alt+v",)),
    ],
)
def test_platform_defaults(action: str, platform: str, keys: tuple[str, ...]) -> None:
    assert platform in ("posix", "windows", "wsl")
    assert ACTIONS_BY_ID[action].defaults(platform) == keys  # type: ignore[arg-type]
