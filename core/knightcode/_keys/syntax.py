"""The key syntax of ``keybindings.json``: ``modifier+…+key``, parsed into one canonical form.

Users write the same key many ways (``shift+ctrl+p`` and ``ctrl+shift+p``, ``esc`` and
``escape``, ``pageup`` and ``pageUp``); bindings are compared, de-duplicated and checked for
conflicts by their canonical string, so every spelling has exactly one.  A bad key is a
:class:`KeySyntaxError` naming the offending part, because the user has to find it in a file.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

__all__ = [
    "KEYS",
    "MODIFIERS",
    "Key",
    "KeySyntaxError",
    "canonical",
    "parse_key",
]

MODIFIERS: tuple[str, ...] = ("ctrl", "shift", "alt", "super")
"""The modifiers, in the order the canonical form writes them."""

_SPECIAL: tuple[str, ...] = (
    "escape",
    "enter",
    "tab",
    "space",
    "backspace",
    "delete",
    "insert",
    "clear",
    "home",
    "end",
    "pageUp",
    "pageDown",
    "up",
    "down",
    "left",
    "right",
)
_SYMBOLS: str = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?"
_FUNCTION: tuple[str, ...] = tuple(f"f{n}" for n in range(1, 13))

KEYS: frozenset[str] = frozenset(
    (*string.ascii_lowercase, *string.digits, *_SPECIAL, *_FUNCTION, *_SYMBOLS)
)
"""Every key name of the spec, in canonical spelling."""

_ALIASES: dict[str, str] = {"esc": "escape", "return": "enter"}
_BY_LOWER: dict[str, str] = {name.lower(): name for name in KEYS} | _ALIASES


class KeySyntaxError(ValueError):
    """A key string that is not in the spec's syntax; the message names the bad part."""


@dataclass(frozen=True, order=True)
class Key:
    """One parsed key: a key name (canonical spelling) and the set of modifiers held."""

    name: str
    ctrl: bool = False
    shift: bool = False
    alt: bool = False
    super: bool = False

    @property
    def modifiers(self) -> tuple[str, ...]:
        """The modifiers held, in canonical order."""
        held = (self.ctrl, self.shift, self.alt, self.super)
        return tuple(mod for mod, on in zip(MODIFIERS, held, strict=True) if on)

    def __str__(self) -> str:
        return "+".join((*self.modifiers, self.name))


def parse_key(text: str) -> Key:
    """Parse one key string, e.g. ``alt+ctrl+x`` or ``pageUp``.

    Case does not matter and modifiers may come in any order, but each at most once; the key is
    the part after the last ``+`` (so ``+`` alone is the plus key, while ``ctrl++`` is an error,
    as in the reference).

    :raises KeySyntaxError: empty string, unknown or repeated modifier, missing or unknown key
    """
    stripped = text.strip()
    if not stripped:
        raise KeySyntaxError("empty key")
    if stripped == "+":
        return Key("+")
    *mods, last = stripped.split("+")
    if not last:
        raise KeySyntaxError(f"{text!r}: no key after the last '+'")
    name = _BY_LOWER.get(last.lower())
    if name is None:
        raise KeySyntaxError(f"{text!r}: unknown key {last!r}")
    held: set[str] = set()
    for mod in mods:
        low = mod.lower()
        if low not in MODIFIERS:
            what = "empty modifier" if not low else f"unknown modifier {mod!r}"
            raise KeySyntaxError(f"{text!r}: {what}")
        if low in held:
            raise KeySyntaxError(f"{text!r}: modifier {mod!r} given twice")
        held.add(low)
    return Key(
        name,
        ctrl="ctrl" in held,
        shift="shift" in held,
        alt="alt" in held,
        super="super" in held,
    )


def canonical(text: str) -> str:
    """The canonical spelling of a key string (``shift+ctrl+P`` → ``ctrl+shift+p``).

    :raises KeySyntaxError: as :func:`parse_key`
    """
    return str(parse_key(text))
