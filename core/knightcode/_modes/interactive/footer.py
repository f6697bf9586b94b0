"""The footer: where you are, what it cost, how full the context is, which model thinks how hard.

Token and cost totals cover the whole session file; they are summed once when a session is
opened (:class:`Totals`) and then kept up to date message by message, so a long session does not
cost a pass over its file at every answer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._types.messages import Usage

__all__ = ["Totals", "compact_count", "footer_text"]


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


@dataclass
class Totals:
    """Tokens and cost of a session so far."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @classmethod
    def of(cls, agent: AgentSession) -> Totals:
        """Summed over the session file (once, when it is opened)."""
        from knightcode._agent.stats import session_stats

        stats = session_stats(agent)
        tokens = stats["tokens"]
        return cls(
            tokens["input"],
            tokens["output"],
            tokens["cacheRead"],
            tokens["cacheWrite"],
            stats["cost"],
        )

    def add(self, usage: Usage | None) -> None:
        """Count one more answer's usage (read leniently, as ``session_stats`` does)."""
        from knightcode._session.tokens import count_value

        if not isinstance(usage, dict):
            return
        self.input += int(count_value(usage.get("input")))
        self.output += int(count_value(usage.get("output")))
        self.cache_read += int(count_value(usage.get("cacheRead")))
        self.cache_write += int(count_value(usage.get("cacheWrite")))
        spent = usage.get("cost")
        if isinstance(spent, dict):
            self.cost += count_value(spent.get("total"))


def footer_text(agent: AgentSession, totals: Totals | None) -> Text:
    """Two lines: cwd (and session name); tokens, cost, context use, model and thinking level."""
    from knightcode._session.tokens import estimate_context_tokens

    first = Text(_home_relative(agent.cwd), style="dim")
    name = agent.session.session_name
    if name:
        first.append(f" • {name}", style="dim")
    if totals is None:
        parts = ["↑… ↓… $…"]  # still being summed (a long session), in the background
    else:
        parts = [f"↑{compact_count(totals.input)}", f"↓{compact_count(totals.output)}"]
        if totals.cache_read:
            parts.append(f"R{compact_count(totals.cache_read)}")
        if totals.cache_write:
            parts.append(f"W{compact_count(totals.cache_write)}")
        parts.append(f"${totals.cost:.3f}")
    window = agent.model.context_window
    used = estimate_context_tokens(agent.messages).tokens
    shown_window = compact_count(window)
    parts.append(f"{used / window * 100:.1f}%/{shown_window}" if window > 0 else "?")
    model = agent.model
    right = model.ref if model.id else "no model"
    if model.reasoning:
        right += f" • {agent.thinking_level}"
    second = Text(" ".join(parts), style="dim")
    second.append("  ")
    second.append(right, style="dim")
    first.append("\n")
    first.append_text(second)
    return first
