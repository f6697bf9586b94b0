"""The deterministic summary used when every summary request failed.

An automatic compaction exists to get a session back under its window; if the summarizer is
down (no key, an outage, a model that cannot fit even small pieces) the session would stay stuck
over its window. So the summary is then assembled without a model, in the ordinary sections:

* Goal — the previous summary's goal, else the first user message;
* the last user message, verbatim (shortened only beyond the summary cap);
* pinned facts — the previous summary's constraints and critical context, and the labels the
  user set on summarized entries;
* the file lists, appended like any default summary's.

The compaction marks it in ``details`` (``"fallback": "deterministic"`` and the reason), which
``compaction_end`` reports as the result's details.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from knightcode import content_text

from .summarize import cap_text

if TYPE_CHECKING:
    from knightcode import AgentMessage, CompactionPreparation

__all__ = ["deterministic_summary", "section"]

_TEXT_LIMIT = 2000


def section(summary: str | None, heading: str) -> str | None:
    """The body of ``## heading`` in a markdown summary, or None."""
    if not summary:
        return None
    match = re.search(
        rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", summary, re.MULTILINE | re.DOTALL
    )
    body = match.group(1).strip() if match else ""
    return body or None


def _user_texts(messages: Sequence[AgentMessage]) -> list[str]:
    texts = []
    for message in messages:
        if message["role"] != "user":
            continue
        text = content_text(message["content"]).strip()
        if text:
            texts.append(text)
    return texts


def _short(text: str, limit: int = _TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + " […]"


def deterministic_summary(prep: CompactionPreparation, reason: str, cap_tokens: int) -> str:
    """A summary of ``prep`` built without a model; ``reason`` says why the model failed."""
    messages = [*prep.messages_to_summarize, *prep.turn_prefix_messages]
    users = _user_texts(messages)
    goal = section(prep.previous_summary, "Goal") or (_short(users[0]) if users else "(unknown)")
    constraints = section(prep.previous_summary, "Constraints & Preferences") or "- (none recorded)"
    done = section(prep.previous_summary, "Progress") or "### Done\n- [x] (not recorded)"
    critical = [section(prep.previous_summary, "Critical Context") or ""]
    critical += [f"- Bookmarked: {label}" for label in prep.labels]
    last = users[-1] if users else "(none)"
    lines = [
        "## Goal",
        goal,
        "",
        "## Constraints & Preferences",
        constraints,
        "",
        "## Progress",
        done if done.startswith("###") else f"### Done\n{done}",
        "",
        "## Key Decisions",
        "- (not recorded: this summary was assembled without a model)",
        "",
        "## Next Steps",
        "1. Continue with the latest user request below.",
        "",
        "## Critical Context",
        f"- Automatic summary unavailable ({_short(reason, 300)}); this summary was "
        + "assembled from the conversation without a model.",
        *[line for line in critical if line],
        "- Latest user request, verbatim:",
        "",
        last,
    ]
    return cap_text("\n".join(lines), cap_tokens)
