"""Model requests made with a subscription login: the token refreshed before the request when
it is about to run out, and once more when the provider answers 401 (revoked or expired early).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncGenerator, Awaitable, Callable

from knightcode._auth.providers import apply_credentials
from knightcode._auth.tokens import OAuthTokens
from knightcode._errors import ConfigError
from knightcode._llm.types import (
    Context,
    Model,
    OnResponse,
    StreamOptions,
    new_assistant_message,
)
from knightcode._types.stream import AssistantMessageEvent

__all__ = ["stream_with_oauth"]

Send = Callable[[Model, StreamOptions], AsyncGenerator[AssistantMessageEvent, None]]


async def stream_with_oauth(
    tokens: OAuthTokens, model: Model, context: Context, options: StreamOptions, send: Send
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """Stream one response of ``model`` through ``send`` with the provider's stored login.

    A 401 that ends the stream before anything was produced makes one retry with a refreshed
    token; a refresh that fails ends the stream with an error asking for a new login.
    """
    rejected: str | None = None
    for attempt in range(2):
        try:
            credentials = await tokens.fresh(model.provider, rejected=rejected)
        except ConfigError as exc:
            yield _failed(model, str(exc))
            return
        request_model, request_options = apply_credentials(
            model, options, credentials, initiator=_initiator(context)
        )
        statuses: list[int] = []
        request_options = dataclasses.replace(
            request_options, on_response=_recorder(request_options, statuses)
        )
        events = send(request_model, request_options)
        retry = False
        async with contextlib.aclosing(events) as stream:
            async for event in stream:
                unauthorized = event.get("type") == "error" and 401 in statuses
                if attempt == 0 and unauthorized and not _produced(event):
                    retry = True
                    break
                yield event
        if not retry:
            return
        rejected = credentials.access


def _recorder(options: StreamOptions, statuses: list[int]) -> OnResponse:
    """An ``on_response`` hook that notes the status and calls the caller's own hook."""
    inner = options.on_response

    def record(status: int, headers: dict[str, str]) -> Awaitable[None] | None:
        statuses.append(status)
        return inner(status, headers) if inner is not None else None

    return record


def _initiator(context: Context) -> str:
    """Who asked for this response: ``"user"`` after a user message, else ``"agent"`` (a
    follow-up after tool results; Copilot does not count those as premium requests).
    """
    messages = context.messages
    return "user" if not messages or messages[-1].get("role") == "user" else "agent"


def _produced(event: AssistantMessageEvent) -> bool:
    """Whether the failed response had produced any content (then it is not retried)."""
    error = event.get("error")
    return isinstance(error, dict) and bool(error.get("content"))


def _failed(model: Model, message: str) -> AssistantMessageEvent:
    output = new_assistant_message(model)
    output["stopReason"] = "error"
    output["errorMessage"] = message
    return {"type": "error", "reason": "error", "error": output}
