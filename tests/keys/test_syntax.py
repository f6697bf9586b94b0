"""The key syntax of spec/keybindings.md: every spelling has one canonical form."""

from __future__ import annotations

import pytest

from knightcode._keys.syntax import KEYS, Key, KeySyntaxError, canonical, parse_key


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("ctrl+shift+x", "ctrl+shift+x"),
        ("alt+ctrl+x", "ctrl+alt+x"),
        ("ctrl+shift+alt+x", "ctrl+shift+alt+x"),
        ("alt+shift+ctrl+x", "ctrl+shift+alt+x"),
        ("super+k", "super+k"),
        ("super+ctrl+k", "ctrl+super+k"),
        ("ctrl+1", "ctrl+1"),
        ("Shift+Ctrl+P", "ctrl+shift+p"),
        ("esc", "escape"),
        ("ESCAPE", "escape"),
        ("return", "enter"),
        ("shift+return", "shift+enter"),
        ("pageup", "pageUp"),
        ("ctrl+PAGEDOWN", "ctrl+pageDown"),
        ("f1", "f1"),
        ("F12", "f12"),
        ("ctrl+-", "ctrl+-"),
        ("ctrl+]", "ctrl+]"),
        ("ctrl+alt+]", "ctrl+alt+]"),
        ("+", "+"),
        ("shift+`", "shift+`"),
        (" ctrl+a ", "ctrl+a"),
    ],
)
def test_canonical_form(written: str, expected: str) -> None:
    assert canonical(written) == expected


@pytest.mark.parametrize(
    ("written", "names"),
    [
        ("", "empty key"),
        ("   ", "empty key"),
        ("ctrl+", "no key after"),
        ("ctrl++", "no key after"),
        ("ctrl+foo", "unknown key 'foo'"),
        ("f13", "unknown key 'f13'"),
        ("hyper+x", "unknown modifier 'hyper'"),
        ("meta+x", "unknown modifier 'meta'"),
        ("ctrl+ctrl+x", "modifier 'ctrl' given twice"),
        ("ctrl++x", "empty modifier"),
    ],
)
def test_errors_name_the_bad_part(written: str, names: str) -> None:
    with pytest.raises(KeySyntaxError, match=names):
        parse_key(written)


def test_every_key_of_the_spec_round_trips() -> None:
    for name in KEYS:
        for mods in ("", "ctrl+", "ctrl+shift+alt+super+"):
            if name == "+" and mods:
                continue  # ``ctrl++`` is invalid by the grammar
            text = mods + name
            assert canonical(text) == text
            assert canonical(canonical(text)) == canonical(text)


def test_key_fields() -> None:
    key = parse_key("alt+super+left")
    assert key == Key("left", alt=True, super=True)
    assert key.modifiers == ("alt", "super")
    assert len(KEYS) == 26 + 10 + 16 + 12 + 31
