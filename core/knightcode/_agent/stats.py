"""Read-only summaries of an :class:`~knightcode._agent.session.AgentSession` that clients ask
for: the user messages a fork can start from, the last answer, and the session's statistics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knightcode._session.messages import content_text

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._types.messages import Usage
    from knightcode.rpc._types import ForkMessage, SessionStats

__all__ = ["fork_messages", "last_assistant_text", "session_stats"]


def fork_messages(agent: AgentSession) -> list[ForkMessage]:
    """The user messages a fork can start from, in file order."""
    found: list[ForkMessage] = []
    for entry in agent.session.get_entries():
        if entry["type"] == "message" and entry["message"]["role"] == "user":
            text = content_text(entry["message"]["content"])
            if text:
                found.append({"entryId": entry["id"], "text": text})
    return found


def last_assistant_text(agent: AgentSession) -> str | None:
    """The text of the last assistant answer (an aborted empty one is skipped), or None."""
    for message in reversed(agent.messages):
        if message["role"] != "assistant":
            continue
        if message["stopReason"] == "aborted" and not message["content"]:
            continue
        return content_text(message["content"]).strip() or None
    return None


def session_stats(agent: AgentSession) -> SessionStats:
    """Message counts, token totals and cost of the conversation, and how full the context is."""
    from knightcode._session.tokens import count_value, estimate_context_tokens
    from knightcode._session.validation import message_problem

    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    tool_calls, cost, total_messages = 0, 0.0, 0

    def add_usage(usage: Usage | None) -> None:
        # Counts are read leniently: a damaged file's odd count is 0, not a failed command.
        nonlocal cost
        if not isinstance(usage, dict):
            return
        for key in tokens:
            tokens[key] += int(count_value(usage.get(key)))
        spent = usage.get("cost")
        if isinstance(spent, dict):
            cost += count_value(spent.get("total"))

    # Totals cover the whole session file: messages a compaction summarised away still cost
    # tokens, and so did the summaries themselves (usage on compaction/branch_summary entries).
    for entry in agent.session.get_entries():
        if entry["type"] in ("compaction", "branch_summary"):
            add_usage(entry.get("usage"))
            continue
        if entry["type"] != "message":
            continue
        message = entry["message"]
        if message_problem(message) is not None:
            continue  # left out of the context too (a warning named it when the file loaded)
        total_messages += 1
        role = message["role"]
        if role in counts:
            counts[role] += 1
        if message["role"] == "assistant":
            tool_calls += sum(1 for block in message["content"] if block["type"] == "toolCall")
            add_usage(message["usage"])
    window = agent.model.context_window
    used = estimate_context_tokens(agent.messages).tokens
    file = agent.session.session_file
    return {
        "sessionFile": str(file) if file is not None else None,
        "sessionId": agent.session.session_id,
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": total_messages,
        "tokens": {
            "input": tokens["input"],
            "output": tokens["output"],
            "cacheRead": tokens["cacheRead"],
            "cacheWrite": tokens["cacheWrite"],
            "total": sum(tokens.values()),
        },
        "cost": cost,
        "contextUsage": {
            "tokens": used,
            "contextWindow": window,
            "percent": (used / window * 100) if window > 0 else None,
        },
    }
