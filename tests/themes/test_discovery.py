"""Where themes come from, which wins a name, and which one is used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knightcode._config.loading import Settings
from knightcode._themes.background import detect_background, from_colorfgbg, from_osc11_reply
from knightcode._themes.discovery import (
    ThemeSources,
    discover_themes,
    select,
    sources_for,
)
from tests.themes.support import valid_theme, write_theme


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    agent_dir, cwd = tmp_path / "themes-agent", tmp_path / "themes-project"
    agent_dir.mkdir()
    cwd.mkdir()
    return agent_dir, cwd


def test_order_builtin_user_project_settings_packages_plugins(
    tmp_path: Path, dirs: tuple[Path, Path]
) -> None:
    agent_dir, cwd = dirs
    write_theme(agent_dir / "themes", valid_theme("user-theme"))
    write_theme(cwd / ".knightcode" / "themes", valid_theme("project-theme"))
    setting = write_theme(tmp_path / "elsewhere", valid_theme("setting-theme"))
    package = tmp_path / "pkg" / "themes"
    write_theme(package, valid_theme("package-theme"))
    plugin = write_theme(tmp_path / "plugin", valid_theme("plugin-theme"))
    sources = ThemeSources(
        agent_dir,
        cwd,
        trusted=True,
        setting_paths=[("elsewhere/setting-theme.json", tmp_path)],
        package_paths=[("git:example", package)],
        plugin_paths=[("plugin", plugin)],
    )
    catalog = discover_themes(sources)
    assert catalog.names == [
        "dark", "light", "user-theme", "project-theme", "setting-theme", "package-theme",
        "plugin-theme",
    ]  # fmt: skip
    assert [entry.source for entry in catalog.entries][2:] == [
        "user", "project", "path", "package:git:example", "plugin",
    ]  # fmt: skip
    assert catalog.entry("setting-theme") is not None
    assert catalog.entry("setting-theme").path == setting  # type: ignore[union-attr]
    assert catalog.warnings == []


def test_an_untrusted_project_contributes_no_themes(dirs: tuple[Path, Path]) -> None:
    agent_dir, cwd = dirs
    write_theme(cwd / ".knightcode" / "themes", valid_theme("project-theme"))
    assert "project-theme" not in discover_themes(ThemeSources(agent_dir, cwd)).names
    trusted = discover_themes(ThemeSources(agent_dir, cwd, trusted=True))
    assert "project-theme" in trusted.names


def test_the_first_of_a_name_wins_and_the_later_one_is_reported(dirs: tuple[Path, Path]) -> None:
    agent_dir, cwd = dirs
    write_theme(agent_dir / "themes", valid_theme("dark"), file="my-dark.json")
    write_theme(agent_dir / "themes", valid_theme("same"), file="a.json")
    later = write_theme(cwd / ".knightcode" / "themes", valid_theme("same"), file="b.json")
    catalog = discover_themes(ThemeSources(agent_dir, cwd, trusted=True))
    assert catalog.names == ["dark", "light", "same"]
    assert catalog.entry("dark").source == "builtin"  # type: ignore[union-attr]
    assert any("my-dark.json" in w and "collision" in w for w in catalog.warnings)
    assert any(str(later) in w for w in catalog.warnings)


def test_settings_and_packages_are_read_from_settings_files(dirs: tuple[Path, Path]) -> None:
    agent_dir, cwd = dirs
    write_theme(agent_dir / "mine", valid_theme("from-setting"))
    package = agent_dir.parent / "package"
    write_theme(package / "themes", valid_theme("from-package"))
    (agent_dir / "settings.json").write_text(
        json.dumps({"themes": ["mine"], "packages": [str(package)]})
    )
    settings = Settings.load(agent_dir, cwd, project_trusted=False)
    catalog = discover_themes(sources_for(agent_dir, cwd, settings, trusted=False))
    assert catalog.names[2:] == ["from-setting", "from-package"]


def test_a_missing_settings_path_is_reported(dirs: tuple[Path, Path]) -> None:
    agent_dir, cwd = dirs
    catalog = discover_themes(ThemeSources(agent_dir, cwd, setting_paths=[("gone", agent_dir)]))
    assert any("gone" in w and "not found" in w for w in catalog.warnings)


def test_select_by_name_by_path_and_the_fallbacks(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    agent_dir, cwd = dirs
    write_theme(agent_dir / "themes", valid_theme("good"))
    write_theme(agent_dir / "themes", valid_theme("bad", accent="#1"))
    catalog = discover_themes(ThemeSources(agent_dir, cwd))
    assert select(catalog, "good").theme.name == "good"
    assert select(catalog, "light").theme.name == "light"
    unknown = select(catalog, "nope", fallback="light")
    assert unknown.theme.name == "light" and unknown.entry is None
    assert unknown.warning is not None and 'theme "nope" not found' in unknown.warning
    bad = select(catalog, "bad")
    assert bad.theme.name == "dark" and bad.entry is not None  # kept: its file is watched
    assert bad.warning is not None and "colors.accent: bad colour value" in bad.warning
    path = write_theme(tmp_path / "cli", valid_theme("from-cli"))
    chosen = select(catalog, str(path))
    assert chosen.theme.name == "from-cli" and chosen.warning is None
    assert catalog.entry("from-cli") is not None  # now offered in /settings too
    missing = select(catalog, str(tmp_path / "none.json"))
    assert missing.warning is not None and "not found" in missing.warning


@pytest.mark.parametrize(
    ("value", "expected"),
    [("15;0", "dark"), ("0;15", "light"), ("7;default;0", "dark"), ("0;7", "light"),
     ("", None), ("x;y", None), (None, None)],
)  # fmt: skip
def test_colorfgbg(value: str | None, expected: str | None) -> None:
    assert from_colorfgbg(value) == expected


def test_osc11_replies() -> None:
    assert from_osc11_reply(b"\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?62;c") == "dark"
    assert from_osc11_reply(b"\x1b]11;rgb:ffff/ffff/ffff\x07") == "light"
    assert from_osc11_reply(b"\x1b]11;rgb:fd/f6/e3\x07") == "light"  # two-digit form
    assert from_osc11_reply(b"\x1b[?62;c") is None  # only the DA1 answer: no OSC 11 support


def test_detect_background_prefers_colorfgbg_and_defaults_to_dark() -> None:
    assert detect_background({"COLORFGBG": "0;15"}, ask=False) == "light"
    assert detect_background({}, ask=False) == "dark"
