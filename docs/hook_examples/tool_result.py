"""Redact API keys from tool output before the model sees it."""

from __future__ import annotations

import re

from knightcode import ToolResultContent, ToolResultPatch, hookimpl

SECRET = re.compile(r"sk-[A-Za-z0-9]{20,}")


@hookimpl
def tool_result(content: list[ToolResultContent]) -> ToolResultPatch | None:
    """Patch only ``content``; ``details`` and ``is_error`` stay as they are."""
    redacted: list[ToolResultContent] = [
        {"type": "text", "text": SECRET.sub("[redacted]", block["text"])}
        if block["type"] == "text"
        else block
        for block in content
    ]
    return ToolResultPatch(content=redacted) if redacted != content else None
