"""The footer: where you are, what it cost, how full the context is, which model thinks how hard."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession

__all__ = ["compact_count", "footer_text"]


def compact_count(value: int) -> str:
    """``1234`` → ``1.2k``, ``2500000`` → ``2.5M`` (the reference's footer style)."""
    if value < 1000:
        return str(value)
    if value < 1_000_000:
        return f"{value / 1000:.1f}k".replace(".0k", "k")
    return f"{value / 1_000_000:.1f}M".replace(".0M", "M")


def _home_relative(path: Path) -> str:
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home) :] if home != "/" and text.startswith(home) else text


def footer_text(agent: AgentSession) -> Text:
    """Two lines: cwd (and session name); tokens, cost, context use, model and thinking level."""
    from knightcode._agent.stats import session_stats

    stats = session_stats(agent)
    first = Text(_home_relative(agent.cwd), style="dim")
    name = agent.session.session_name
    if name:
        first.append(f" • {name}", style="dim")
    tokens = stats["tokens"]
    parts = [f"↑{compact_count(tokens['input'])}", f"↓{compact_count(tokens['output'])}"]
    if tokens["cacheRead"]:
        parts.append(f"R{compact_count(tokens['cacheRead'])}")
    if tokens["cacheWrite"]:
        parts.append(f"W{compact_count(tokens['cacheWrite'])}")
    parts.append(f"${stats['cost']:.3f}")
    usage = stats["contextUsage"]
    percent = usage["percent"]
    window = compact_count(usage["contextWindow"])
    parts.append(f"{percent:.1f}%/{window}" if percent is not None else f"?/{window}")
    left = " ".join(parts)
    model = agent.model
    right = model.ref if model.id else "no model"
    if model.reasoning:
        right += f" • {agent.thinking_level}"
    second = Text(left, style="dim")
    second.append("  ")
    second.append(right, style="dim")
    first.append("\n")
    first.append_text(second)
    return first
