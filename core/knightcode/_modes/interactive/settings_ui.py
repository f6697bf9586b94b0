"""``/settings``: the settings a user changes while working, applied at once and saved in the
user's ``settings.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp

__all__ = ["SettingRow", "edit_settings", "setting_rows"]


@dataclass(frozen=True)
class SettingRow:
    """One line of ``/settings``: ``path`` in settings.json, what it is called, its choices."""

    path: tuple[str, ...]
    label: str
    values: tuple[str, ...]
    current: str
    description: str = ""


def _flag(value: bool) -> str:
    return "on" if value else "off"


def setting_rows(app: KnightcodeApp) -> list[SettingRow]:
    from knightcode._types.messages import THINKING_LEVELS

    model = app.settings_model()
    return [
        SettingRow(
            ("defaultThinkingLevel",),
            "Thinking level",
            THINKING_LEVELS,
            app.agent.thinking_level,
            "How hard a reasoning model thinks (also shift+tab)",
        ),
        SettingRow(
            ("steeringMode",),
            "Steering mode",
            ("one-at-a-time", "all"),
            model.steering_mode,
            "Messages typed while the agent works: delivered one by one or all together",
        ),
        SettingRow(
            ("followUpMode",),
            "Follow-up mode",
            ("one-at-a-time", "all"),
            model.follow_up_mode,
            "Follow-up messages (alt+enter): one by one or all together",
        ),
        SettingRow(
            ("compaction", "enabled"),
            "Auto-compaction",
            ("on", "off"),
            _flag(app.agent.auto_compaction_enabled),
            "Summarise old context when the window fills up",
        ),
        SettingRow(
            ("hideThinkingBlock",),
            "Hide thinking",
            ("on", "off"),
            _flag(not app.transcript.options.show_thinking),
            "Show thinking blocks collapsed (also ctrl+t)",
        ),
        SettingRow(
            ("quietStartup",),
            "Quiet start-up",
            ("on", "off"),
            _flag(model.quiet_startup),
            "Leave out the key hints and the loaded resources at start",
        ),
        SettingRow(
            ("doubleEscapeAction",),
            "Double escape",
            ("tree", "fork", "none"),
            model.double_escape_action,
            "What escape pressed twice on an empty editor opens",
        ),
        SettingRow(
            ("treeFilterMode",),
            "Tree filter",
            ("default", "no-tools", "user-only", "labeled-only", "all"),
            model.tree_filter_mode,
            "Which entries /tree shows at first",
        ),
    ]


async def edit_settings(app: KnightcodeApp) -> None:
    from knightcode._config.edit_settings import set_setting
    from knightcode._errors import KnightcodeError
    from knightcode._types.messages import thinking_level_of

    rows = setting_rows(app)
    changes = await app.dialogs.settings(rows)
    if not changes:
        return
    path = app.agent_dir / "settings.json"
    for row, value in changes:
        key = row.path[0]
        stored: object = value
        if value in ("on", "off") and row.values == ("on", "off"):
            stored = value == "on"
        if key == "compaction":
            from knightcode._config.jsonfile import read_json_object

            current = read_json_object(path) or {}
            section = current.get("compaction")
            merged = dict(section) if isinstance(section, dict) else {}
            merged["enabled"] = stored
            stored = merged
        try:
            set_setting(path, key, stored)
        except (KnightcodeError, OSError) as error:
            app.transcript.notice(f"Could not save {row.label} in {path}: {error}", "error")
            return
        # Apply to the running session at once.
        if key == "defaultThinkingLevel":
            level = thinking_level_of(value)
            if level is not None:
                await app.agent.set_thinking_level(level)
        elif key == "steeringMode" and value in ("one-at-a-time", "all"):
            app.agent.set_steering_mode("all" if value == "all" else "one-at-a-time")
        elif key == "followUpMode" and value in ("one-at-a-time", "all"):
            app.agent.set_follow_up_mode("all" if value == "all" else "one-at-a-time")
        elif key == "compaction":
            app.agent.set_auto_compaction(value == "on")
        elif key == "hideThinkingBlock":
            app.transcript.options.show_thinking = value == "off"
            app.reprint()
    app.reload_settings()
    app.refresh_footer()
    app.transcript.notice("Settings saved")
