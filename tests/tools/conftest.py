"""Fixtures for the tool tests: a local tool context in the test's project directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._tools import ToolContext


@pytest.fixture
def ctx(project_dir: Path) -> ToolContext:
    """A context on the local backend, rooted at the (empty) project directory."""
    return ToolContext.local(project_dir)
