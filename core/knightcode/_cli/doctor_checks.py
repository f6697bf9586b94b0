"""``knightcode doctor``'s file checks: every configuration file, validated by the same code that
reads it at start-up, all problems collected instead of stopping at the first file.

Each check reports the file and a one-line verdict; a file that does not exist is fine (its
defaults apply). Project files are checked whether or not the project is trusted: reading JSON
runs nothing, and an untrusted project's broken file is worth knowing about before trusting it.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from knightcode._errors import KnightcodeError

__all__ = ["FileFinding", "check_files"]

Status = Literal["ok", "problem", "warning", "skipped"]


@dataclass(frozen=True)
class FileFinding:
    """What doctor says about one file (``path`` None for a group such as themes)."""

    check: str
    path: Path | None
    status: Status
    detail: str


def _guard(check: str, path: Path, run: Callable[[], str | None]) -> FileFinding:
    """Run one validation; a missing file is ``ok``, an error a ``problem`` with its message."""
    if not path.exists():
        return FileFinding(check, path, "ok", "not present (defaults apply)")
    try:
        detail = run()
    except (KnightcodeError, ValueError, OSError) as error:
        return FileFinding(check, path, "problem", str(error))
    return FileFinding(check, path, "ok", detail or "valid")


def _settings(path: Path, project: bool) -> Callable[[], str | None]:
    def run() -> str | None:
        from knightcode._config.jsonfile import read_json_object
        from knightcode._config.loading import Settings

        data = read_json_object(path) or {}
        if project:
            settings = Settings(path.with_name("unused-global.json"), path, {}, data)
        else:
            settings = Settings(path, path.with_name("unused-project.json"), data, None)
        settings.model  # noqa: B018 - validates every value, raising for the first bad one
        return None

    return run


def _models_json(path: Path) -> str | None:
    from knightcode._config.jsonfile import read_json_object
    from knightcode._llm.models_config import parse_models_file

    parsed = parse_models_file(read_json_object(path) or {}, path)
    return f"valid ({len(parsed.providers)} providers)"


def _auth_json(path: Path) -> str | None:
    from knightcode._llm.keys import AuthStorage

    AuthStorage(path).check()
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ValueError(
            f"{path}: permissions {mode:04o} let others read the keys; expected 0600 "
            f"(chmod 600 {path})"
        )
    return None


def _keybindings(agent_dir: Path) -> Callable[[], str | None]:
    def run() -> str | None:
        from knightcode._keys.registry import KeyRegistry

        warnings = KeyRegistry(agent_dir).warnings
        if warnings:
            raise ValueError("; ".join(warnings))
        return None

    return run


def _tools_json(agent_dir: Path) -> Callable[[], str | None]:
    def run() -> str | None:
        from knightcode_builtins.web_tools.config import load_tools_config

        load_tools_config(agent_dir)
        return None

    return run


def _mcp_json(path: Path) -> str | None:
    from knightcode_builtins.mcp.config import McpConfigError, read_mcp_json

    try:
        servers = read_mcp_json(path)
    except McpConfigError as error:
        raise ValueError(str(error)) from None
    return f"valid ({len(servers)} servers)"


def _themes(agent_dir: Path, cwd: Path) -> Iterator[FileFinding]:
    """Every theme file of the user, the project and settings ``themes`` (not the built-ins)."""
    from knightcode._config.loading import Settings
    from knightcode._themes.discovery import discover_themes, sources_for
    from knightcode._themes.loader import ThemeFileError, load_theme_file

    try:
        settings = Settings.load(agent_dir, cwd, project_trusted=True)
    except KnightcodeError:
        settings = Settings(agent_dir / "settings.json", cwd / "settings.json")
    catalog = discover_themes(sources_for(agent_dir, cwd, settings, trusted=True))
    for warning in catalog.warnings:
        yield FileFinding("theme", None, "warning", warning)
    for name in catalog.names:
        entry = catalog.entry(name)
        if entry is None or entry.source == "builtin":
            continue
        try:
            load_theme_file(entry.path)
        except ThemeFileError as error:
            yield FileFinding(f"theme {name}", entry.path, "problem", "; ".join(error.problems))
        else:
            yield FileFinding(f"theme {name}", entry.path, "ok", "valid")


def check_files(agent_dir: Path, cwd: Path) -> list[FileFinding]:
    """Every configuration file of ``agent_dir`` and of the project in ``cwd``."""
    from knightcode._config.paths import project_config_dir

    project = project_config_dir(cwd)
    findings = [
        _guard(
            "settings.json (user)",
            agent_dir / "settings.json",
            _settings(agent_dir / "settings.json", False),
        ),
        _guard(
            "settings.json (project)",
            project / "settings.json",
            _settings(project / "settings.json", True),
        ),
        _guard(
            "models.json",
            agent_dir / "models.json",
            lambda: _models_json(agent_dir / "models.json"),
        ),
        _guard("auth.json", agent_dir / "auth.json", lambda: _auth_json(agent_dir / "auth.json")),
        _guard("keybindings.json", agent_dir / "keybindings.json", _keybindings(agent_dir)),
        _guard("tools.json", agent_dir / "tools.json", _tools_json(agent_dir)),
        _guard(
            "mcp.json (user)", agent_dir / "mcp.json", lambda: _mcp_json(agent_dir / "mcp.json")
        ),
        _guard("mcp.json (project)", project / "mcp.json", lambda: _mcp_json(project / "mcp.json")),
    ]
    findings.extend(_themes(agent_dir, cwd))
    return findings
