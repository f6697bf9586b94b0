"""Add today's date to the conversation and a house style to the system prompt."""

from __future__ import annotations

import datetime

from knightcode import AgentStartChanges, PluginMessage, hookimpl


@hookimpl
def before_agent_start(system_prompt: str) -> AgentStartChanges | None:
    """A message after the prompt, and the system prompt with one more rule."""
    today = datetime.date.today().isoformat()
    return AgentStartChanges(
        message=PluginMessage(custom_type="date", content=f"Today is {today}.", display=False),
        system_prompt=system_prompt + "\n\nAlways answer in British English.",
    )
