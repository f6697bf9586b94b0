"""Helpers for the configuration tests: writing settings files where knightcode looks for them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

WriteJson = Callable[[Path, Any], Path]


@pytest.fixture
def write_json() -> WriteJson:
    """Write a value as JSON to a path (parents created) and return the path."""

    def write(path: Path, data: Any) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    return write


@pytest.fixture
def global_settings(agent_dir: Path) -> Path:
    """Path of the test's global settings file (not created)."""
    return agent_dir / "settings.json"


@pytest.fixture
def project_settings(project_dir: Path) -> Path:
    """Path of the test project's settings file (not created)."""
    return project_dir / ".knightcode" / "settings.json"
