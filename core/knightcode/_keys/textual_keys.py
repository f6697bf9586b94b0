"""Textual's key names ↔ our key syntax; the only module of ``_keys`` that imports Textual.

Textual decodes the terminal's bytes (Kitty CSI-u, xterm modifyOtherKeys, legacy and rxvt
sequences) into names such as ``ctrl+shift+f``, ``pageup`` or ``ctrl+right_square_bracket``; we do
not decode escape sequences ourselves.  This module only renames: symbols are spelled by their
Unicode names in Textual (``circumflex_accent``) and as characters in ours (``^``), Textual sorts
modifiers alphabetically, and a few paths hand us raw characters (modifyOtherKeys' ctrl+enter
arrives as ``ctrl+`` and a carriage return).
"""

from __future__ import annotations

import re

from textual import events
from textual.keys import KEY_NAME_REPLACEMENTS, _character_to_key

from knightcode._keys.syntax import _SYMBOLS, MODIFIERS, KeySyntaxError, canonical, parse_key

__all__ = ["install_modify_other_keys_fix", "key_ids", "to_key_id", "to_textual"]

_MODIFY_OTHER_KEYS = re.compile(r"\x1b\[27;(\d+);(\d+)~")
_SHIFT_ONLY = 2
#: Legacy alt (ESC prefix) on keys Textual names without the alt: tmux sends alt+enter this way
#: even with extended keys on.
_LEGACY_ALT = {"\x1b\r": "\x1b[13;3u", "\x1b\x7f": "\x1b[127;3u"}


def _without_alternate_keys(sequence: str) -> str:
    """A Kitty ``CSI code:shifted:base ; mods u`` with the alternate-key fields folded away.

    With a modifier other than shift the *base-layout* key is kept when the terminal sent one,
    so ctrl+c is ctrl+c on a Russian layout too (as in the reference); otherwise the key itself.
    Textual 8.2 cannot parse these fields at all (it raises), so this also keeps its input
    thread alive.
    """
    if not sequence.startswith("\x1b[") or not sequence.endswith("u"):
        return sequence
    fields = sequence[2:-1].split(";")
    key = fields[0].split(":")
    if len(key) == 1:
        return sequence
    modifier_field = fields[1].split(":")[0] if len(fields) > 1 else ""
    modifiers = int(modifier_field) if modifier_field.isdigit() else 1
    base = key[2] if len(key) > 2 and key[2].isdigit() else None
    code = base if base is not None and (modifiers - 1) & ~1 else key[0]
    return f"\x1b[{code};{modifiers}u" if modifiers > 1 else f"\x1b[{code}u"


def _as_csi_u(sequence: str) -> str:
    """The modifyOtherKeys form ``CSI 27 ; mod ; code ~`` as the equivalent Kitty form
    ``CSI code ; mod u``, which Textual decodes fully; shift alone on a printable character
    stays as it is (that is just the character, and Textual types it).
    """
    if sequence in _LEGACY_ALT:
        return _LEGACY_ALT[sequence]
    if ":" in sequence:
        return _without_alternate_keys(sequence)
    match = _MODIFY_OTHER_KEYS.fullmatch(sequence)
    if match is None:
        return sequence
    modifiers, code = int(match[1]), int(match[2])
    if modifiers == _SHIFT_ONLY and code != 0x20 and chr(code).isprintable():
        return sequence
    return f"\x1b[{code};{modifiers}u"


def install_modify_other_keys_fix() -> None:
    """Make Textual 8.2 keep every modifier of modifyOtherKeys sequences (idempotent).

    Textual reads ``CSI 27 ; 3 ; 13 ~`` (alt+enter from xterm) as a Kitty sequence whose text
    field is the key, and drops alt and, for non-printable keys, shift; it also drops the alt of
    ``ESC CR`` (alt+enter as tmux sends it, ``app.message.followUp``) and ``ESC DEL``. We do
    not decode anything ourselves: the sequence is rewritten into the Kitty form with the same
    meaning and handed to Textual's own parser.
    ``tests/keys/test_decoding.py`` runs the table through the patched parser.
    """
    from textual._xterm_parser import XTermParser

    original = XTermParser._parse_extended_key
    if getattr(original, "_knightcode_fix", False):
        return

    def parse_extended_key(self: XTermParser, sequence: str) -> list[events.Key] | None:
        return original(self, _as_csi_u(sequence))

    parse_extended_key._knightcode_fix = True  # type: ignore[attr-defined]
    XTermParser._parse_extended_key = parse_extended_key  # type: ignore[method-assign,assignment]


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
