"""Skills and prompt templates shipped beside the plugin file."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from knightcode import Resources, hookimpl

HERE = Path(__file__).parent


@hookimpl
def resources_discover(reason: Literal["startup", "reload"]) -> Resources | None:
    """Add ``skills/`` and ``prompts/`` next to this file (missing folders are skipped)."""
    return Resources(skill_paths=(HERE / "skills",), prompt_paths=(HERE / "prompts",))
