"""``/settings``: the settings a user changes while working, applied at once and saved in the
user's ``settings.json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._modes.interactive.dialogs.settings_dialog import SettingValue

__all__ = ["apply_setting", "edit_settings", "preview_setting"]


async def apply_setting(app: KnightcodeApp, key: str, value: SettingValue) -> None:
    """What a changed setting does to the running session (the rest apply from the next start
    or the next use, as the settings are read again).
    """
    from knightcode._types.messages import thinking_level_of

    if key == "defaultThinkingLevel":
        level = thinking_level_of(value)
        if level is not None:
            await app.agent.set_thinking_level(level)
    elif key == "steeringMode":
        app.agent.set_steering_mode("all" if value == "all" else "one-at-a-time")
    elif key == "followUpMode":
        app.agent.set_follow_up_mode("all" if value == "all" else "one-at-a-time")
    elif key == "compaction.enabled":
        app.agent.set_auto_compaction(bool(value))
    elif key == "theme":
        preview_setting(app, key, value)
    elif key == "hideThinkingBlock":
        app.transcript.options.show_thinking = not value
        app.reprint()


def preview_setting(app: KnightcodeApp, key: str, value: SettingValue) -> None:
    """A change shown at once, while ``/settings`` is open (the theme: everything is drawn
    again in it; a theme that cannot be used says why).
    """
    if key != "theme" or str(value) == app.theme_state.name:
        return
    warning = app.theme_state.use(str(value))
    app.restyle()
    if warning is not None:
        app.transcript.notice(warning, "warning")


async def edit_settings(app: KnightcodeApp) -> None:
    from knightcode._config.edit_settings import set_setting
    from knightcode._errors import KnightcodeError

    changes = await app.dialogs.settings(lambda key, value: preview_setting(app, key, value))
    if not changes:
        return
    path = app.agent_dir / "settings.json"
    for key, value in changes.items():
        try:
            set_setting(path, key, value)
        except (KnightcodeError, OSError) as error:
            app.transcript.notice(f"Could not save {key} in {path}: {error}", "error")
            return
        await apply_setting(app, key, value)
    app.reload_settings()
    app.refresh_footer()
    described = ", ".join(f"{key} = {value}" for key, value in changes.items())
    app.transcript.notice(f"Saved {described}")
