"""Building the records RPC mode writes besides session events: responses and data shapes.

The data shapes are the ``TypedDict`` definitions of :mod:`knightcode.rpc._types`, which the
Python client returns too, so the server and the client cannot drift apart unnoticed.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._llm.types import Model
    from knightcode._plugins.host import PluginFailure
    from knightcode.rpc._types import ModelInfo, ResponseData, State

__all__ = [
    "ANSWERED",
    "NO_DATA",
    "NoData",
    "Record",
    "Reply",
    "Sentinel",
    "failure",
    "model_json",
    "plugin_error",
    "state_json",
    "success",
]

Record = dict[str, object]
"""One JSON object written to stdout (a response, an ``extension_error``, a UI request …)."""


class Sentinel(enum.Enum):
    """Handler results that are not response data (an enum, so ``is`` checks narrow types)."""

    NO_DATA = "no data"
    """Respond without a ``data`` field."""
    ANSWERED = "answered"
    """The handler already wrote its response."""


NO_DATA: Final = Sentinel.NO_DATA
"""A handler result meaning "respond without a ``data`` field"."""

ANSWERED: Final = Sentinel.ANSWERED
"""A handler result meaning "the handler already wrote its response"."""

NoData: TypeAlias = Literal[Sentinel.NO_DATA]
"""The return type of a handler that answers without data."""

Reply: TypeAlias = "ResponseData | Literal[Sentinel.NO_DATA, Sentinel.ANSWERED]"
"""What a handler returns: the response's ``data``, or one of the sentinels."""


def success(
    request_id: str | None,
    command: str,
    data: ResponseData | NoData = NO_DATA,
) -> Record:
    """``{"id"?, "type": "response", "command", "success": true, "data"?}``."""
    record: Record = {"id": request_id} if request_id is not None else {}
    record.update(type="response", command=command, success=True)
    if data is not NO_DATA:
        record["data"] = data
    return record


def failure(request_id: str | None, command: str, error: str) -> Record:
    """``{"id"?, "type": "response", "command", "success": false, "error"}``."""
    record: Record = {"id": request_id} if request_id is not None else {}
    record.update(type="response", command=command, success=False, error=error)
    return record


def plugin_error(failure: PluginFailure) -> Record:
    """The ``extension_error`` record for a plugin failure (``spec/json.md``)."""
    return {
        "type": "extension_error",
        "extensionPath": failure.source,
        "event": failure.event,
        "error": failure.error,
    }


def model_json(model: Model) -> ModelInfo:
    """A model as RPC clients see it (the reference's ``Model`` shape: ``thinkingLevelMap`` and
    ``compat`` only when set). Configured headers are left out: they may carry credentials.
    """
    info: ModelInfo = {
        "id": model.id,
        "name": model.name,
        "api": model.api,
        "provider": model.provider,
        "baseUrl": model.base_url,
        "reasoning": model.reasoning,
        "input": list(model.input),
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
        "cost": {
            "input": model.cost.input,
            "output": model.cost.output,
            "cacheRead": model.cost.cache_read,
            "cacheWrite": model.cost.cache_write,
        },
    }
    if model.thinking_level_map:
        info["thinkingLevelMap"] = dict(model.thinking_level_map)
    if model.compat:
        info["compat"] = dict(model.compat)
    return info


def state_json(agent: AgentSession, session_name: str | None) -> State:
    """``get_state``: every field of the reference's ``RpcSessionState``."""
    session = agent.session
    file = session.session_file
    state: State = {
        "model": model_json(agent.model),
        "thinkingLevel": agent.thinking_level,
        "isStreaming": agent.is_streaming,
        "isCompacting": agent.is_compacting,
        "steeringMode": agent.queues.steering_mode,
        "followUpMode": agent.queues.follow_up_mode,
        "sessionFile": str(file) if file is not None else None,
        "sessionId": session.session_id,
        "autoCompactionEnabled": agent.auto_compaction_enabled,
        "messageCount": len(agent.messages),
        "pendingMessageCount": agent.queues.pending,
    }
    if session_name is not None:  # the reference leaves it out while unset
        state["sessionName"] = session_name
    return state
