"""Fixtures for plugin host tests: extension files, fake installed distributions, a host."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from knightcode._plugins.host import PluginFailure, PluginHost
from knightcode._plugins.planning import HostOptions, create_plugin_host


def write(path: Path, code: str) -> Path:
    """Write dedented ``code`` to ``path`` (creating folders) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return path


def recorder_plugin(label: str, log: str = "calls.log") -> str:
    """Source of an extension that appends ``label`` to a log file on ``session_start``."""
    return f"""
    from pathlib import Path
    from knightcode import hookimpl

    @hookimpl
    def session_start(reason, ctx):
        with open(Path(ctx.cwd) / {log!r}, "a") as log:
            log.write({label!r} + "\\n")
    """


def canary_plugin(canary: Path) -> str:
    """Source of an extension that proves it was imported by creating ``canary``."""
    return f"""
    from pathlib import Path
    Path({str(canary)!r}).write_text("imported")
    """


@pytest.fixture(autouse=True)
def no_installed_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Host tests see only the plugins they install (fake_site), not knightcode's real built-ins."""
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "")


@pytest.fixture
def fake_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Install fake distributions with entry points, visible through importlib.metadata.

    Call it with ``name``, ``entry_points`` ({group: {ep_name: "module"}}) and ``modules``
    ({module_name: source}). The site folder is put on ``sys.path`` and ``PYTHONPATH``.
    """
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))

    def install(
        name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]
    ) -> Path:
        info = site / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        lines = []
        for group, eps in entry_points.items():
            lines.append(f"[{group}]")
            lines += [f"{ep} = {target}" for ep, target in eps.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        for module, source in modules.items():
            write(site / f"{module}.py", source)
        prefixes = {"knightcode.builtins": "builtin:", "knightcode.plugins": "plugin:"}
        names = [f"{prefixes[group]}{ep}" for group, eps in entry_points.items() for ep in eps]
        allowed = [n for n in os.environ.get("KNIGHTCODE_LOAD_PLUGINS", "").split(",") if n]
        monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", ",".join(allowed + names))
        return site

    return install


@pytest.fixture
def failures() -> list[PluginFailure]:
    """Failures reported by hosts built with :func:`make_host`."""
    return []


@pytest.fixture
def make_host(
    agent_dir: Path, project_dir: Path, failures: list[PluginFailure]
) -> Callable[..., PluginHost]:
    """Build a host for the test's project and agent dir, collecting failures."""

    def build(
        *extension_paths: Path,
        approve: bool = False,
        no_extensions: bool = False,
        trace: bool = False,
    ) -> PluginHost:
        options = HostOptions(
            cwd=project_dir,
            agent_dir=agent_dir,
            extension_paths=tuple(extension_paths),
            approve=approve,
            no_extensions=no_extensions,
            trace=trace,
        )
        return create_plugin_host(options, on_failure=failures.append)

    return build
