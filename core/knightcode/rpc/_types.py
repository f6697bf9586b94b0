"""The shapes of RPC response data, as ``TypedDict``: the server's handlers build them and the
client's methods return them, so both ends are checked against the same definition (the values
on the client are the plain dicts decoded from JSON). ``docs/rpc.md`` describes each field.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from knightcode._types.events import CompactionResult
from knightcode._types.messages import AgentMessage, ThinkingLevel

__all__ = [
    "AssistantText",
    "BashResult",
    "Cancelled",
    "CommandInfo",
    "CommandList",
    "CompactionResult",
    "ContextUsage",
    "CycleModelResult",
    "ExportResult",
    "ForkMessage",
    "ForkMessageList",
    "ForkResult",
    "Message",
    "MessageList",
    "ModelCost",
    "ModelInfo",
    "ModelList",
    "QueueMode",
    "ResponseData",
    "SessionStats",
    "State",
    "ThinkingLevelResult",
    "TokenTotals",
]

QueueMode = Literal["all", "one-at-a-time"]
"""How the steering and follow-up queues deliver: everything at once, or one message a turn."""

Message = AgentMessage
"""A conversation message (``docs/session-format.md`` lists the roles and their fields)."""


class ModelCost(TypedDict):
    """Prices in dollars per million tokens."""

    input: float
    output: float
    cacheRead: float
    cacheWrite: float


class ModelInfo(TypedDict):
    """A model as ``get_state``, ``set_model`` and ``get_available_models`` report it
    (configured headers are left out: they may carry credentials).
    """

    id: str
    name: str
    api: str
    provider: str
    baseUrl: str
    reasoning: bool
    input: list[str]
    contextWindow: int
    maxTokens: int
    cost: ModelCost
    thinkingLevelMap: NotRequired[dict[str, str | None]]
    """models.json ``thinkingLevelMap``, when the model has one (as the reference reports it)."""
    compat: NotRequired[dict[str, object]]
    """The model's compatibility switches (``maxTokensField`` …), when it has any."""


class ModelList(TypedDict):
    """``get_available_models``."""

    models: list[ModelInfo]


class State(TypedDict):
    """``get_state``."""

    model: ModelInfo
    thinkingLevel: ThinkingLevel
    isStreaming: bool
    isCompacting: bool
    steeringMode: QueueMode
    followUpMode: QueueMode
    sessionFile: str | None
    sessionId: str
    sessionName: NotRequired[str]
    """Left out while the session has no name (as the reference does)."""
    autoCompactionEnabled: bool
    messageCount: int
    pendingMessageCount: int


class MessageList(TypedDict):
    """``get_messages``: the conversation the model sees, oldest first."""

    messages: list[AgentMessage]


class CycleModelResult(TypedDict):
    """``cycle_model`` (``null`` when there is no other model)."""

    model: ModelInfo
    thinkingLevel: ThinkingLevel
    isScoped: bool


class ThinkingLevelResult(TypedDict):
    """``cycle_thinking_level`` (``null`` for a model that does not reason)."""

    level: ThinkingLevel


class BashResult(TypedDict):
    """``bash``: the output's tail; ``fullOutputPath`` names the whole output when truncated."""

    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: NotRequired[str]


class TokenTotals(TypedDict):
    """Tokens the session's requests used, summed over the whole session file."""

    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    total: int


class ContextUsage(TypedDict):
    """How full the context is: estimated ``tokens`` of ``contextWindow`` (``percent`` None
    when the window is unknown).
    """

    tokens: int
    contextWindow: int
    percent: float | None


class SessionStats(TypedDict):
    """``get_session_stats``: counts, token totals and cost, and how full the context is."""

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


class Cancelled(TypedDict):
    """``new_session``, ``switch_session``, ``clone``: whether a plugin cancelled it."""

    cancelled: bool


class ForkMessage(TypedDict):
    """A user message a fork can start from."""

    entryId: str
    text: str


class ForkMessageList(TypedDict):
    """``get_fork_messages``."""

    messages: list[ForkMessage]


class ForkResult(TypedDict):
    """``fork``: ``text`` is the forked user message's, for the client's editor."""

    cancelled: bool
    text: NotRequired[str]


class AssistantText(TypedDict):
    """``get_last_assistant_text``."""

    text: str | None


class ExportResult(TypedDict):
    """``export_html``: where the page was written."""

    path: str


class CommandInfo(TypedDict):
    """``get_commands``: a command run by sending ``/name args`` as a prompt — a plugin's
    (``extension``), a prompt template (``prompt``) or a skill (``skill``, named ``skill:NAME``).
    ``location`` is ``user``, ``project``, ``path``, ``package:<source>`` or ``plugin`` for
    templates and skills.
    """

    name: str
    description: str
    source: Literal["extension", "prompt", "skill"]
    location: NotRequired[str]
    path: NotRequired[str]


class CommandList(TypedDict):
    """``get_commands``."""

    commands: list[CommandInfo]


ResponseData = (
    State
    | MessageList
    | ModelInfo
    | ModelList
    | CycleModelResult
    | ThinkingLevelResult
    | CompactionResult
    | BashResult
    | SessionStats
    | Cancelled
    | ForkResult
    | ForkMessageList
    | AssistantText
    | ExportResult
    | CommandList
    | None
)
"""The ``data`` of a successful response (None: ``"data": null``; commands without data
send no ``data`` field at all)."""
