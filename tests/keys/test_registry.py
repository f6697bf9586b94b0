"""KeyRegistry: defaults, keybindings.json (replace, disable, warn), conflicts, plugin shortcuts."""

from __future__ import annotations

import json
from pathlib import Path

from knightcode import ShortcutDefinition
from knightcode._keys.actions import ACTIONS
from knightcode._keys.registry import KeyRegistry


def _write(agent_dir: Path, data: object) -> None:
    (agent_dir / "keybindings.json").write_text(json.dumps(data), encoding="utf-8")


def _noop(ctx: object) -> None:
    return None


def test_defaults_without_a_file(tmp_path: Path) -> None:
    reg = KeyRegistry(tmp_path, platform="posix")
    assert reg.warnings == ()
    assert reg.conflicts == ()
    assert reg.keys_for("app.model.cycleBackward") == ("ctrl+shift+p",)
    assert reg.keys_for("app.session.new") == ()
    assert reg.action_for("shift+ctrl+p", "main") == "app.model.cycleBackward"
    assert reg.action_for("ctrl+d", "sessionPicker") == "app.session.delete"
    # The spec's own shared defaults: the editor action comes first (precedence), both listed.
    assert reg.actions_for("ctrl+d", "main") == ("tui.editor.deleteCharForward", "app.exit")
    assert reg.action_for("f5", "main") is None


def test_platform_defaults(tmp_path: Path) -> None:
    assert KeyRegistry(tmp_path, platform="windows").keys_for("app.suspend") == ()
    assert KeyRegistry(tmp_path, platform="wsl").keys_for("tui.editor.undo") == ("alt+z",)


def test_configured_value_replaces_and_empty_list_disables(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "$schema": "https://knightcode.dev/schemas/keybindings.schema.json",
            "app.session.new": "ctrl+shift+n",
            "app.session.tree": ["ctrl+shift+t", "alt+shift+t", "shift+ctrl+t"],
            "tui.altScreen.pageUp": [],
        },
    )
    reg = KeyRegistry(tmp_path, platform="posix")
    assert reg.warnings == ()
    assert reg.keys_for("app.session.new") == ("ctrl+shift+n",)
    assert reg.keys_for("app.session.tree") == ("ctrl+shift+t", "shift+alt+t")
    assert reg.keys_for("tui.altScreen.pageUp") == ()
    assert reg.action_for("pageUp", "altScreen") is None
    assert reg.action_for("ctrl+shift+n", "main") == "app.session.new"


def test_unknown_actions_and_invalid_keys_are_warnings(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "app.nope": "ctrl+x",
            "app.session.new": ["ctrl+foo", "ctrl+shift+n"],
            "app.session.fork": 3,
            "app.model.select": ["hyper+l"],
        },
    )
    reg = KeyRegistry(tmp_path, platform="posix")
    text = "\n".join(reg.warnings)
    assert "unknown action 'app.nope'" in text
    assert "unknown key 'foo'" in text
    assert "3 is not a key string" in text
    assert "unknown modifier 'hyper'" in text
    assert reg.keys_for("app.session.new") == ("ctrl+shift+n",)
    # All keys invalid: the default stays rather than silently unbinding the action.
    assert reg.keys_for("app.model.select") == ("ctrl+l",)


def test_an_unreadable_file_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text("{not json", encoding="utf-8")
    reg = KeyRegistry(tmp_path, platform="posix")
    assert len(reg.warnings) == 1 and "keybindings.json" in reg.warnings[0]
    assert reg.keys_for("app.exit") == ("ctrl+d",)
    (tmp_path / "keybindings.json").write_text("[" * 100 + "]" * 100, encoding="utf-8")
    reg.reload()
    assert "deeper" in reg.warnings[0] or "nest" in reg.warnings[0]


def test_conflicts_within_one_context(tmp_path: Path) -> None:
    _write(tmp_path, {"app.session.new": "ctrl+p", "app.session.togglePath": "ctrl+x"})
    reg = KeyRegistry(tmp_path, platform="posix")
    found = {(c.key, c.context): c.actions for c in reg.conflicts}
    assert found == {("ctrl+p", "main"): ("app.session.new", "app.model.cycleForward")}
    assert "ctrl+p is bound to app.session.new, app.model.cycleForward" in str(reg.conflicts[0])


def test_reload_applies_changes(tmp_path: Path) -> None:
    reg = KeyRegistry(tmp_path, platform="posix")
    assert reg.keys_for("app.exit") == ("ctrl+d",)
    _write(tmp_path, {"app.exit": "ctrl+shift+q"})
    reg.reload()
    assert reg.keys_for("app.exit") == ("ctrl+shift+q",)
    (tmp_path / "keybindings.json").unlink()
    reg.reload()
    assert reg.keys_for("app.exit") == ("ctrl+d",)


def test_plugin_shortcuts(tmp_path: Path) -> None:
    _write(tmp_path, {"app.session.new": "ctrl+shift+n"})
    reg = KeyRegistry(tmp_path, platform="posix")
    reg.add_shortcuts(
        [
            ("p1", ShortcutDefinition(key="shift+ctrl+h", handler=_noop, description="help")),
            ("p1", ShortcutDefinition(key="escape", handler=_noop)),  # app.interrupt
            ("p2", ShortcutDefinition(key="ctrl+p", handler=_noop)),  # app.model.cycleForward
            ("p2", ShortcutDefinition(key="ctrl+shift+n", handler=_noop, description="mine")),
            ("p3", ShortcutDefinition(key="ctrl+nope", handler=_noop)),
        ]
    )
    text = "\n".join(reg.warnings)
    assert "plugin p1: shortcut escape is reserved for app.interrupt, refused" in text
    assert "plugin p2: shortcut ctrl+p is reserved for app.model.cycleForward" in text
    assert "plugin p2: shortcut ctrl+shift+n overrides app.session.new" in text
    assert "plugin p3" in text and "unknown key 'nope'" in text
    assert [s.key for s in reg.shortcuts] == ["ctrl+shift+h", "ctrl+shift+n"]
    shortcut = reg.shortcut_for("ctrl+shift+h")
    assert shortcut is not None and shortcut.plugin == "p1"
    assert reg.action_for("ctrl+shift+n", "main") is None  # the plugin took it
    assert reg.action_for("escape", "main") == "app.interrupt"
    # Shortcuts survive a reload, re-checked against the new bindings.
    _write(tmp_path, {"app.interrupt": "ctrl+shift+h"})
    reg.reload()
    assert [s.key for s in reg.shortcuts] == ["escape", "ctrl+shift+n"]
    rows = reg.hotkeys()
    assert len(rows) == len(ACTIONS) + 2
    assert rows[-1].action == "plugin:p2" and rows[-1].keys == "ctrl+shift+n"
    assert rows[-1].description == "mine"


def test_hotkeys_rows(tmp_path: Path) -> None:
    reg = KeyRegistry(None, platform="posix")
    rows = {row.action: row for row in reg.hotkeys()}
    assert rows["tui.editor.cursorWordLeft"].keys == "alt+left, ctrl+left, alt+b"
    assert rows["app.session.new"].keys == ""
    assert rows["app.exit"].section == "Application"
