"""The keys doctor's analysis: which keys reach knightcode in which terminal, and the proposals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knightcode._keys.doctor import (
    Binding,
    Terminal,
    active_bindings,
    analyse,
    problem,
    proposed_file_values,
)
from knightcode._keys.probe import parse_replies, tmux_key_id
from knightcode._keys.registry import KeyRegistry

LEGACY = Terminal("legacy")
KITTY = Terminal("kitty")
MOK = Terminal("modifyOtherKeys")
TMUX_OFF = Terminal("legacy", tmux=True, tmux_extended_keys="off", tmux_prefixes=("ctrl+b",))
TMUX_ON = Terminal("legacy", tmux=True, tmux_extended_keys="on", tmux_prefixes=("ctrl+b",))
SCREEN = Terminal("kitty", screen=True)

# (key, terminal, expected kind or None) — what reaches knightcode after Textual's decoding.
CASES = [
    ("shift+enter", LEGACY, "undeliverable"),
    ("shift+enter", TMUX_OFF, "undeliverable"),
    ("shift+enter", TMUX_ON, None),
    ("shift+enter", KITTY, None),
    ("shift+enter", MOK, None),
    ("shift+enter", SCREEN, "undeliverable"),
    ("shift+enter", Terminal("unknown"), None),
    ("ctrl+enter", LEGACY, "undeliverable"),
    ("ctrl+alt+enter", LEGACY, "undeliverable"),
    ("alt+enter", LEGACY, None),
    ("enter", LEGACY, None),
    ("ctrl+j", LEGACY, None),
    ("ctrl+shift+p", LEGACY, "undeliverable"),
    ("ctrl+shift+p", TMUX_ON, None),
    ("ctrl+alt+g", LEGACY, "undeliverable"),
    ("ctrl+alt+g", MOK, None),
    ("ctrl+alt+]", LEGACY, "undeliverable"),
    ("ctrl+]", LEGACY, None),
    ("ctrl+\\", LEGACY, None),
    ("ctrl+-", LEGACY, "undeliverable"),
    ("ctrl+1", LEGACY, "undeliverable"),
    ("ctrl+1", MOK, None),
    ("alt+-", LEGACY, "undeliverable"),
    ("alt+1", LEGACY, "undeliverable"),
    ("alt+g", LEGACY, None),
    ("alt+g", TMUX_ON, None),
    ("alt+b", LEGACY, "undeliverable"),
    ("alt+b", TMUX_ON, "undeliverable"),
    ("alt+b", MOK, None),
    ("alt+f", LEGACY, "undeliverable"),
    ("ctrl+alt+g", TMUX_ON, "undeliverable"),
    ("alt+1", TMUX_ON, "undeliverable"),
    ("shift+alt+b", TMUX_ON, None),
    ("alt+up", TMUX_ON, None),
    ("shift+1", LEGACY, "undeliverable"),
    ("shift+alt+-", LEGACY, "undeliverable"),
    ("shift+alt+g", LEGACY, None),
    ("shift+tab", LEGACY, None),
    ("ctrl+tab", LEGACY, "undeliverable"),
    ("alt+tab", LEGACY, "undeliverable"),
    ("ctrl+backspace", LEGACY, "undeliverable"),
    ("alt+backspace", LEGACY, None),
    ("ctrl+space", LEGACY, "undeliverable"),
    ("shift+escape", LEGACY, "undeliverable"),
    ("ctrl+up", LEGACY, None),
    ("ctrl+shift+up", LEGACY, None),
    ("shift+f1", LEGACY, None),
    ("pageUp", LEGACY, None),
    ("super+k", LEGACY, "undeliverable"),
    ("super+k", MOK, "undeliverable"),
    ("super+k", KITTY, None),
    ("ctrl+b", TMUX_ON, "collision"),
    ("ctrl+b", LEGACY, None),
    ("ctrl+a", SCREEN, "collision"),
    ("ctrl+s", SCREEN, "collision"),
    ("ctrl+q", SCREEN, "collision"),
    ("ctrl+s", KITTY, None),
    ("alt+enter", Terminal("kitty", program="windows-terminal"), "collision"),
    ("ctrl+shift+f", Terminal("kitty", program="windows-terminal"), "collision"),
    ("ctrl+p", Terminal("kitty", program="vscode"), "collision"),
    ("ctrl+p", KITTY, None),
]


@pytest.mark.parametrize(("key", "terminal", "kind"), CASES)
def test_problem(key: str, terminal: Terminal, kind: str | None) -> None:
    found = problem(key, terminal)
    assert (found[0] if found else None) == kind, found


def test_reasons_name_the_cause() -> None:
    assert problem("shift+enter", TMUX_OFF) == (
        "undeliverable",
        "arrives as plain enter (tmux extended-keys is off)",
    )
    assert problem("ctrl+b", TMUX_ON) == ("collision", "tmux's prefix key")


def _defaults() -> list[Binding]:
    return active_bindings(KeyRegistry(None, platform="posix"))


def test_tmux_without_extended_keys_proposes_ctrl_j_for_shift_enter() -> None:
    findings = {(f.binding.key, f.binding.owner): f for f in analyse(_defaults(), TMUX_OFF)}
    newline = findings["shift+enter", "tui.input.newLine"]
    assert newline.kind == "undeliverable"
    assert (newline.proposal, newline.already_bound) == ("ctrl+j", True)
    # searchPrevious has no working key left: a free one is proposed in its own screen.
    previous = findings["shift+enter", "tui.altScreen.searchPrevious"]
    assert (previous.proposal, previous.already_bound) == ("ctrl+j", False)
    shifted_g = findings["ctrl+shift+g", "tui.altScreen.searchPrevious"]
    assert shifted_g.already_bound and shifted_g.proposal == "ctrl+j"
    backward = findings["ctrl+shift+p", "app.model.cycleBackward"]
    assert backward.proposal == "alt+p" and not backward.already_bound


def test_tmux_with_extended_keys_finds_only_the_prefix_and_ctrl_alt_in_the_defaults() -> None:
    prefix, jump = analyse(_defaults(), TMUX_ON)
    assert (prefix.binding.key, prefix.binding.owner) == ("ctrl+b", "tui.editor.cursorLeft")
    assert (prefix.kind, prefix.proposal, prefix.already_bound) == ("collision", "left", True)
    # tmux sends alt as a leading ESC even with extended keys: ctrl+alt+] is read as ctrl+].
    assert (jump.binding.key, jump.reason) == ("ctrl+alt+]", "arrives as ctrl+]")


def test_a_key_read_as_another_key_of_the_same_action_is_not_reported() -> None:
    word_left = [Binding("alt+b", "tui.editor.cursorWordLeft", ("main",))]
    assert [f.reason for f in analyse(word_left, LEGACY)] == [
        "arrives as ctrl+left (legacy key encoding)"
    ]
    word_left.append(Binding("ctrl+left", "tui.editor.cursorWordLeft", ("main",)))
    assert analyse(word_left, LEGACY) == []
    assert analyse(_defaults(), KITTY) == []


def test_a_proposal_is_never_a_key_taken_in_the_same_screen() -> None:
    bindings = [
        Binding("ctrl+shift+x", "a.one", ("main",)),
        Binding("alt+x", "a.two", ("main",)),
        Binding("ctrl+shift+y", "a.three", ("tree",)),
        Binding("ctrl+shift+y", "a.four", ("tree",)),
    ]
    found = {f.binding.owner: f.proposal for f in analyse(bindings, LEGACY)}
    # alt+x is taken; ctrl+alt+x does not reach knightcode under legacy; shift+alt+x does.
    assert found["a.one"] == "shift+alt+x"
    # Two actions on one key get different proposals.
    assert found["a.three"] == "alt+y"
    assert found["a.four"] == "shift+alt+y"


def test_no_proposal_when_nothing_works_and_none_for_plugins() -> None:
    bindings = [
        Binding("ctrl+-", "tui.editor.undo", ("main",)),
        Binding("ctrl+shift+k", "plugin:demo", ("main",)),
    ]
    found = {f.binding.owner: f for f in analyse(bindings, LEGACY)}
    assert found["tui.editor.undo"].proposal is None
    assert found["plugin:demo"].proposal is None
    assert found["plugin:demo"].kind == "undeliverable"


def test_file_values_keep_the_current_keys_and_skip_already_bound() -> None:
    findings = analyse(_defaults(), TMUX_OFF)
    registry = KeyRegistry(None, platform="posix")
    current = {b.owner: registry.keys_for(b.owner) for b in _defaults() if not b.is_plugin}
    values = proposed_file_values(findings, current)
    assert "tui.input.newLine" not in values
    assert values["tui.altScreen.searchPrevious"] == ["shift+enter", "ctrl+shift+g", "ctrl+j"]
    assert values["app.model.cycleBackward"] == ["ctrl+shift+p", "alt+p"]


def test_plugin_shortcuts_and_the_users_file_are_analysed(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(json.dumps({"app.session.new": "ctrl+shift+n"}))
    registry = KeyRegistry(tmp_path, platform="posix")
    found = {(f.binding.key, f.binding.owner) for f in analyse(active_bindings(registry), LEGACY)}
    assert ("ctrl+shift+n", "app.session.new") in found


@pytest.mark.parametrize(
    ("name", "key_id"),
    [
        ("C-b", "ctrl+b"),
        ("C-a", "ctrl+a"),
        ("^A", "ctrl+a"),
        ("M-a", "alt+a"),
        ("C-M-x", "ctrl+alt+x"),
        ("C-Space", "ctrl+space"),
        ("F12", "f12"),
        ("S-F1", "shift+f1"),
        ("PPage", "pageUp"),
        ("BSpace", "backspace"),
        ("`", "`"),
        ("None", None),
        ("", None),
        ("KP0", None),
    ],
)
def test_tmux_key_names(name: str, key_id: str | None) -> None:
    assert tmux_key_id(name) == key_id


def test_terminal_replies() -> None:
    assert parse_replies(b"\x1b[?1u\x1b[?62;22c") == (True, None, True)
    assert parse_replies(b"\x1b[>4;2m\x1b[?1;2c") == (False, 2, True)
    assert parse_replies(b"\x1b[?6") == (False, None, False)


# What a legacy (xterm-style) terminal sends for each key: the doctor's verdict must match what
# the UI's own decoder (Textual's parser with our fix) makes of these bytes.
LEGACY_BYTES = [
    ("shift+enter", "\r"),
    ("ctrl+enter", "\r"),
    ("alt+enter", "\x1b\r"),
    ("ctrl+j", "\n"),
    ("ctrl+space", "\x00"),
    ("ctrl+backspace", "\x08"),
    ("alt+backspace", "\x1b\x7f"),
    ("ctrl+shift+p", "\x10"),
    ("ctrl+p", "\x10"),
    ("ctrl+alt+g", "\x1b\x07"),
    ("ctrl+]", "\x1d"),
    ("ctrl+alt+]", "\x1b\x1d"),
    ("alt+g", "\x1bg"),
    ("alt+b", "\x1bb"),
    ("alt+f", "\x1bf"),
    ("shift+alt+g", "\x1bG"),
    ("alt+1", "\x1b1"),
    ("alt+-", "\x1b-"),
    ("alt+tab", "\x1b\t"),
    ("shift+tab", "\x1b[Z"),
    ("ctrl+up", "\x1b[1;5A"),
    ("ctrl+shift+up", "\x1b[1;6A"),
    ("alt+up", "\x1b[1;3A"),
    ("shift+f1", "\x1b[1;2P"),
]


@pytest.mark.parametrize(("key", "sent"), LEGACY_BYTES)
def test_legacy_rules_match_the_decoder(key: str, sent: str) -> None:
    import time

    from textual import events
    from textual._xterm_parser import XTermParser

    from knightcode._keys.textual_keys import install_modify_other_keys_fix, key_ids

    install_modify_other_keys_fix()
    parser = XTermParser()
    messages = list(parser.feed(sent))
    time.sleep(0.15)  # past the parser's wait for the rest of an escape sequence
    messages += list(parser.tick())
    read = [i for m in messages if isinstance(m, events.Key) for i in key_ids(m)]
    assert (key in read) == (problem(key, LEGACY) is None), read
