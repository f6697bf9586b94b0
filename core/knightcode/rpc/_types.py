"""The shapes of RPC response data, as ``TypedDict`` for type checkers (the values are the plain
dicts decoded from JSON). ``docs/rpc.md`` describes each field.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "BashResult",
    "CommandInfo",
    "ContextUsage",
    "CycleModelResult",
    "ForkMessage",
    "ForkResult",
    "ModelInfo",
    "SessionStats",
    "State",
    "TokenTotals",
]


class ModelInfo(TypedDict):
    id: str
    name: str
    api: str
    provider: str
    baseUrl: str
    reasoning: bool
    input: list[str]
    contextWindow: int
    maxTokens: int
    cost: dict[str, float]


class State(TypedDict):
    """``get_state``."""

    model: ModelInfo
    thinkingLevel: str
    isStreaming: bool
    isCompacting: bool
    steeringMode: Literal["all", "one-at-a-time"]
    followUpMode: Literal["all", "one-at-a-time"]
    sessionFile: str | None
    sessionId: str
    sessionName: str | None
    autoCompactionEnabled: bool
    messageCount: int
    pendingMessageCount: int


class CycleModelResult(TypedDict):
    model: ModelInfo
    thinkingLevel: str
    isScoped: bool


class BashResult(TypedDict):
    """``bash``: the output's tail; ``fullOutputPath`` names the whole output when truncated."""

    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: NotRequired[str]


class TokenTotals(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    total: int


class ContextUsage(TypedDict):
    tokens: int
    contextWindow: int
    percent: float | None


class SessionStats(TypedDict):
    """``get_session_stats``."""

    sessionFile: str | None
    sessionId: str
    userMessages: int
    assistantMessages: int
    toolCalls: int
    toolResults: int
    totalMessages: int
    tokens: TokenTotals
    cost: float
    contextUsage: ContextUsage


class ForkMessage(TypedDict):
    entryId: str
    text: str


class ForkResult(TypedDict):
    cancelled: bool
    text: NotRequired[str]


class CommandInfo(TypedDict):
    """``get_commands``: a plugin command, run by sending ``/name args`` as a prompt."""

    name: str
    description: str
    source: Literal["extension"]
    location: NotRequired[str]
    path: NotRequired[str]


Message = dict[str, Any]
"""A conversation message (``docs/session-format.md`` lists the roles and their fields)."""
