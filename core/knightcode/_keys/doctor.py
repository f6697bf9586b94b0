"""Which active bindings a terminal cannot deliver or takes for itself, and what to use instead.

A pure function of (bindings, terminal) so that every rule is tested by a table
(``tests/keys/test_doctor.py``); finding out what the terminal is (queries, tmux options) is
:mod:`knightcode._keys.probe`'s job, and ``knightcode keys doctor`` / ``/keys`` only print.

The rules say what *reaches knightcode* as a key id after Textual's decoding, e.g. under legacy
encoding ``shift+enter`` is a plain carriage return (``enter``) and ``ctrl+space`` a NUL
(``ctrl+@``); they were checked against the decoder in ``_keys/textual_keys.py``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from knightcode._keys.actions import ACTIONS, MAIN
from knightcode._keys.syntax import Key, KeySyntaxError, parse_key

if TYPE_CHECKING:
    from knightcode._keys.registry import KeyRegistry

__all__ = [
    "Binding",
    "Encoding",
    "Finding",
    "Terminal",
    "active_bindings",
    "analyse",
    "problem",
    "proposed_file_values",
]

Encoding = Literal["kitty", "modifyOtherKeys", "legacy", "unknown"]
"""How the terminal encodes modified keys: the Kitty keyboard protocol, xterm's modifyOtherKeys
(also what tmux's ``extended-keys`` produces), the legacy bytes, or not found out."""

#: Control characters a legacy terminal sends for ctrl+symbol, which Textual decodes back.
_LEGACY_CTRL_SYMBOLS = frozenset("@[\\]^_")

#: Keys Windows Terminal keeps for itself by default.
_WINDOWS_TERMINAL_KEYS = {
    "alt+enter": "toggles full screen",
    "ctrl+shift+t": "opens a new tab",
    "ctrl+shift+w": "closes the pane",
    "ctrl+shift+n": "opens a new window",
    "ctrl+shift+d": "duplicates the tab",
    "ctrl+shift+p": "opens the command palette",
    "ctrl+shift+f": "opens find",
    "ctrl+shift+c": "copies",
    "ctrl+shift+v": "pastes",
    "ctrl+tab": "switches tabs",
    "ctrl+shift+tab": "switches tabs",
    "ctrl+,": "opens the settings",
}
#: Keys VS Code's integrated terminal hands to the editor by default (commandsToSkipShell).
_VSCODE_KEYS = {
    "ctrl+p": "opens Quick Open",
    "ctrl+shift+p": "opens the command palette",
    "f1": "opens the command palette",
    "ctrl+`": "toggles the terminal panel",
}


@dataclass(frozen=True)
class Terminal:
    """What sits between the keyboard and knightcode.

    :param encoding: what the terminal itself answered or is known to do
    :param tmux: running inside tmux
    :param tmux_extended_keys: tmux's ``extended-keys`` (``off``/``on``/``always``; None: unknown)
    :param tmux_prefixes: tmux's ``prefix``/``prefix2`` as key ids
    :param tmux_extended_format: tmux's ``extended-keys-format`` (3.5+; None: older or unknown)
    :param screen: running inside GNU screen (which forwards no extended keys)
    :param screen_escape: screen's command key as a key id
    :param program: the terminal program when known (``vscode``, ``windows-terminal``, …)
    """

    encoding: Encoding
    tmux: bool = False
    tmux_extended_keys: str | None = None
    tmux_prefixes: tuple[str, ...] = ()
    tmux_extended_format: str | None = None
    screen: bool = False
    screen_escape: str = "ctrl+a"
    program: str | None = None

    @property
    def effective(self) -> Encoding:
        """The encoding keys have when they reach knightcode: a multiplexer re-encodes them."""
        if self.screen:
            return "legacy"
        if self.tmux and self.tmux_extended_keys is not None:
            return "legacy" if self.tmux_extended_keys == "off" else "modifyOtherKeys"
        return self.encoding


@dataclass(frozen=True)
class Binding:
    """One active key: its owner (an action id, or ``plugin:<name>``) and the screens it acts in."""

    key: str
    owner: str
    contexts: tuple[str, ...]

    @property
    def is_plugin(self) -> bool:
        """A plugin shortcut, whose key keybindings.json cannot change."""
        return self.owner.startswith("plugin:")


@dataclass(frozen=True)
class Finding:
    """A binding that does not work here, why, and what to use instead.

    :param kind: ``undeliverable`` (the terminal cannot send it) or ``collision`` (the terminal
        or multiplexer takes it)
    :param proposal: a working key (None: none found, or a plugin's key)
    :param already_bound: the proposal is another key of the same action (nothing to write)
    """

    binding: Binding
    kind: Literal["undeliverable", "collision"]
    reason: str
    proposal: str | None = None
    already_bound: bool = False
    notes: tuple[str, ...] = field(default=())


def problem(
    key_id: str, terminal: Terminal
) -> tuple[Literal["undeliverable", "collision"], str] | None:
    """Why ``key_id`` does not reach knightcode in ``terminal`` (None: it does)."""
    collision = _collision(key_id, terminal)
    if collision is not None:
        return "collision", collision
    alt_prefix = terminal.tmux and not terminal.screen
    reason = _undeliverable(parse_key(key_id), terminal.effective, alt_prefix=alt_prefix)
    if reason is not None:
        where = _where(terminal)
        return "undeliverable", f"{reason}{where}"
    return None


def _where(terminal: Terminal) -> str:
    if terminal.screen:
        return " (screen forwards only legacy keys)"
    if terminal.tmux and terminal.tmux_extended_keys == "off":
        return " (tmux extended-keys is off)"
    if terminal.effective == "legacy":
        return " (legacy key encoding)"
    return ""


def _collision(key_id: str, terminal: Terminal) -> str | None:
    if terminal.tmux and key_id in terminal.tmux_prefixes:
        return "tmux's prefix key"
    if terminal.screen:
        if key_id == terminal.screen_escape:
            return "screen's command key"
        if key_id in ("ctrl+s", "ctrl+q"):
            return "screen's flow control may take it (defflow off in ~/.screenrc)"
    if terminal.program == "windows-terminal" and key_id in _WINDOWS_TERMINAL_KEYS:
        return f"Windows Terminal {_WINDOWS_TERMINAL_KEYS[key_id]}"
    if terminal.program == "vscode" and key_id in _VSCODE_KEYS:
        return f"VS Code {_VSCODE_KEYS[key_id]}"
    return None


def _undeliverable(key: Key, encoding: Encoding, *, alt_prefix: bool) -> str | None:
    """Why the terminal cannot send ``key`` in ``encoding`` (None: it can, or we cannot tell).

    :param alt_prefix: alt arrives as a leading ESC even though other modifiers are encoded (tmux
        does so with extended keys on: a key with a legacy form keeps it)
    """
    if encoding in ("kitty", "unknown"):
        return None
    if key.super:
        return "super reaches a program only through the Kitty keyboard protocol"
    if encoding == "modifyOtherKeys":
        return _alt_prefixed(key) if alt_prefix else None
    name = key.name
    if name == "enter" and (key.ctrl or key.shift):
        return "arrives as plain enter" if not key.alt else "arrives as alt+enter"
    if name == "tab" and key.ctrl:
        return "arrives as tab"
    if name == "backspace" and (key.ctrl or key.shift):
        return "arrives as backspace"
    if name == "escape" and (key.ctrl or key.shift):
        return "arrives as escape"
    if name == "space" and (key.ctrl or key.shift):
        return "arrives as ctrl+@" if key.ctrl else "arrives as space"
    if len(name) == 1 and key.ctrl and key.shift:
        letter = name in string.ascii_lowercase
        return f"arrives as ctrl+{name}" if letter or name in _LEGACY_CTRL_SYMBOLS else _NO_FORM
    if len(name) == 1 and key.ctrl and not key.alt and not _legacy_ctrl(name):
        return _NO_FORM
    if len(name) == 1 and key.shift and not key.ctrl and name not in string.ascii_lowercase:
        return _SHIFTED
    return _alt_prefixed(key)


def _legacy_ctrl(name: str) -> bool:
    """Whether ctrl+``name`` has a control character of its own."""
    return name in string.ascii_lowercase or name in _LEGACY_CTRL_SYMBOLS


def _alt_prefixed(key: Key) -> str | None:
    """What becomes of an alt key sent as ESC + the key's legacy form, as Textual reads it."""
    if not key.alt:
        return None
    name = key.name
    if name == "tab":
        return "arrives as shift+tab"
    if len(name) != 1:
        return None  # ESC + a CSI sequence: read with alt
    if key.shift and not key.ctrl:
        return None if name in string.ascii_lowercase else _SHIFTED
    if key.ctrl:
        return f"arrives as ctrl+{name}" if _legacy_ctrl(name) else _NO_FORM
    if name in _ALT_AS_WORD_MOTION:
        return f"arrives as {_ALT_AS_WORD_MOTION[name]}"
    if name not in string.ascii_lowercase:
        return "is not read with alt (ESC and a symbol or digit)"
    return None


#: ESC b / ESC f are macOS's word motions; Textual reads them so.
_ALT_AS_WORD_MOTION = {"b": "ctrl+left", "f": "ctrl+right"}

_NO_FORM = "has no legacy form"
_SHIFTED = "arrives as the shifted character"


def _candidates(key: Key) -> list[str]:
    """Replacements to try for ``key``, best first (all in canonical form)."""
    name = key.name
    if name == "enter":
        return ["ctrl+j", "alt+enter"]
    if name == "backspace":
        return ["alt+backspace", "ctrl+w"]
    plain = name if len(name) == 1 else None
    found: list[str] = []
    if plain is not None:
        found += [f"alt+{name}", f"ctrl+alt+{name}", f"shift+alt+{name}"]
    else:
        found += [f"alt+{name}", f"shift+alt+{name}", f"ctrl+alt+{name}"]
    if key.shift and not key.ctrl and plain is None:
        found.append(f"ctrl+{name}")
    return found


def analyse(bindings: Sequence[Binding], terminal: Terminal) -> list[Finding]:
    """Every binding that does not work in ``terminal``, with a proposed replacement.

    A replacement is another key of the same action that works or was proposed for it already
    (``already_bound``: nothing to write for this one), else the
    first candidate that reaches knightcode and is free in every screen the action acts in
    (not bound there, not proposed there for another action). A key that arrives as another key
    of the same action (alt+b read as ctrl+left) is not reported. Plugin shortcuts are reported
    without a replacement: keybindings.json cannot move them.
    """
    working = [b for b in bindings if problem(b.key, terminal) is None]
    taken: set[tuple[str, str]] = {(b.key, c) for b in bindings for c in b.contexts}
    keys_of: dict[str, set[str]] = {}
    for b in bindings:
        keys_of.setdefault(b.owner, set()).add(b.key)
    proposed: dict[str, str] = {}
    findings: list[Finding] = []
    for binding in bindings:
        found = problem(binding.key, terminal)
        if found is None:
            continue
        kind, reason = found
        if _arrives_as(reason) in keys_of.get(binding.owner, ()):
            continue  # e.g. alt+b read as ctrl+left, which does the same
        if binding.is_plugin:
            findings.append(Finding(binding, kind, reason))
            continue
        same = [b.key for b in working if b.owner == binding.owner]
        if binding.owner in proposed:
            same.append(proposed[binding.owner])
        if same:
            findings.append(Finding(binding, kind, reason, same[0], already_bound=True))
            continue
        proposal = _free_candidate(binding, terminal, taken)
        if proposal is not None:
            taken.update((proposal, c) for c in binding.contexts)
            proposed[binding.owner] = proposal
        findings.append(Finding(binding, kind, reason, proposal))
    return findings


def _arrives_as(reason: str) -> str | None:
    """The key id a reason says the key arrives as (``arrives as ctrl+left …``), if any."""
    match = _ARRIVES.match(reason)
    if match is None:
        return None
    try:
        return str(parse_key(match[1]))
    except KeySyntaxError:
        return None


_ARRIVES = re.compile(r"arrives as (\S+)")


def _free_candidate(
    binding: Binding, terminal: Terminal, taken: set[tuple[str, str]]
) -> str | None:
    for candidate in _candidates(parse_key(binding.key)):
        key = str(parse_key(candidate))
        if problem(key, terminal) is not None:
            continue
        if any((key, c) in taken for c in binding.contexts):
            continue
        return key
    return None


def proposed_file_values(
    findings: Iterable[Finding], current: dict[str, tuple[str, ...]]
) -> dict[str, list[str]]:
    """The keybindings.json values that add each new proposal to its action's active keys.

    :param current: every action's active keys (the keys are kept: they work elsewhere)
    """
    values: dict[str, list[str]] = {}
    for finding in findings:
        if finding.proposal is None or finding.already_bound or finding.binding.is_plugin:
            continue
        action = finding.binding.owner
        keys = values.setdefault(action, list(current.get(action, ())))
        if finding.proposal not in keys:
            keys.append(finding.proposal)
    return values


def active_bindings(registry: KeyRegistry) -> list[Binding]:
    """Every active key of ``registry``: the actions' (defaults or keybindings.json), then the
    plugin shortcuts.
    """
    found = [
        Binding(key, action.id, action.contexts)
        for action in ACTIONS
        for key in registry.keys_for(action.id)
    ]
    found += [Binding(s.key, f"plugin:{s.plugin}", (MAIN,)) for s in registry.shortcuts]
    return found
