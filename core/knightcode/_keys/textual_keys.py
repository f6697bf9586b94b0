"""Textual's key names ↔ our key syntax; the only module of ``_keys`` that imports Textual.

Textual decodes the terminal's bytes (Kitty CSI-u, xterm modifyOtherKeys, legacy and rxvt
sequences) into names such as ``ctrl+shift+f``, ``pageup`` or ``ctrl+right_square_bracket``; we do
not decode escape sequences ourselves.  This module only renames: symbols are spelled by their
Unicode names in Textual (``circumflex_accent``) and as characters in ours (``^``), Textual sorts
modifiers alphabetically, and a few paths hand us raw characters (modifyOtherKeys' ctrl+enter
arrives as ``ctrl+`` and a carriage return).
"""

from __future__ import annotations

from textual import events
from textual.keys import KEY_NAME_REPLACEMENTS, _character_to_key

from knightcode._keys.syntax import _SYMBOLS, MODIFIERS, KeySyntaxError, canonical, parse_key

__all__ = ["key_ids", "to_key_id", "to_textual"]


def _textual_symbol_name(char: str) -> str:
    name = _character_to_key(char)
    return KEY_NAME_REPLACEMENTS.get(name, name)


_SYMBOL_TO_TEXTUAL: dict[str, str] = {char: _textual_symbol_name(char) for char in _SYMBOLS}
_OURS_TO_TEXTUAL: dict[str, str] = {
    **_SYMBOL_TO_TEXTUAL,
    "pageUp": "pageup",
    "pageDown": "pagedown",
}
_TEXTUAL_TO_OURS: dict[str, str] = {
    **{name: char for char, name in _SYMBOL_TO_TEXTUAL.items()},
    "hyphen_minus": "-",
    "low_line": "_",
    "plus_sign": "+",
    "solidus": "/",
    "reverse_solidus": "\\",
    "commercial_at": "@",
    # Raw characters, as Textual reports some xterm modifyOtherKeys sequences (``CSI 27;5;13~``
    # arrives as ``ctrl+\r``).
    "\r": "enter",
    "\n": "enter",
    "\t": "tab",
    "\x7f": "backspace",
    "\x08": "backspace",
    "\x1b": "escape",
    " ": "space",
}
_TEXTUAL_MODIFIERS = frozenset(MODIFIERS)


def to_key_id(textual_key: str) -> str | None:
    """Our canonical key id for a Textual key name, or None when our syntax has no such key
    (a bare modifier press, a keypad key, a letter of another alphabet, ``hyper``/``meta``).
    """
    if textual_key in ("+", "plus"):
        return "+"
    *mods, name = textual_key.split("+")
    if any(mod not in _TEXTUAL_MODIFIERS for mod in mods):
        return None
    name = _TEXTUAL_TO_OURS.get(name, name)
    if len(name) == 1 and name.isalpha() and name.isupper():
        # An upper-case letter means shift was held (modifyOtherKeys sends the shifted code).
        name = name.lower()
        if "shift" not in mods:
            mods.append("shift")
    try:
        return canonical("+".join((*mods, name)))
    except KeySyntaxError:
        return None


def key_ids(event: events.Key) -> tuple[str, ...]:
    """Every key id a Textual key event stands for: its key first, then its aliases
    (a carriage return is both ``enter`` and ``ctrl+m``), without duplicates or unrepresentable
    names.
    """
    found: dict[str, None] = {}
    for name in (event.key, *event.aliases):
        key = to_key_id(name)
        if key is not None:
            found.setdefault(key)
    return tuple(found)


def to_textual(key_id: str) -> str:
    """The Textual key name for one of our key ids, e.g. for a ``Binding``.

    :raises KeySyntaxError: ``key_id`` is not in our syntax
    """
    key = parse_key(key_id)
    name = _OURS_TO_TEXTUAL.get(key.name, key.name)
    return "+".join((*sorted(key.modifiers), name))
