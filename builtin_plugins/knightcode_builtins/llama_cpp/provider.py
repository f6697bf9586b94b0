"""The ``llama.cpp`` provider: models discovered from the router, chat, classification.

* :func:`discover` asks the router for its models (``GET /props`` + ``GET /models``) each time
  the registry refreshes, so the list, the states and every context window are the server's.
* :func:`stream` is knightcode's OpenAI-compatible client pointed at the router (the ``model``
  field picks the model), with the router's terse errors rewritten into ones that say what to
  do. A sleeping model wakes on the request; with autoload on, an unloaded one loads.
* :func:`classify` answers typed questions: decision models through ``/v1/systemone``, chat
  models through next-token probabilities.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from knightcode import (
    AssistantMessageEvent,
    Classification,
    ClassificationError,
    ClassifyRequest,
    Context,
    DiscoveredModels,
    DiscoveryError,
    Model,
    ProviderAccess,
    StreamOptions,
)
from knightcode_builtins.llama_cpp.connection import Connection, resolve_connection
from knightcode_builtins.llama_cpp.errors import (
    ModelNotFound,
    ModelNotLoaded,
    RouterError,
    RouterUnreachable,
    Unauthorized,
)
from knightcode_builtins.llama_cpp.loading import load_failure
from knightcode_builtins.llama_cpp.router import RouterClient
from knightcode_builtins.llama_cpp.router_models import (
    CLASSIFY_API,
    SYSTEM_ONE_API,
    discovered_models,
)

__all__ = ["classify", "connection_of", "discover", "stream"]

DISCOVERY_TIMEOUT = 10.0
# How knightcode's client words a connection closed before any response (httpx's
# RemoteProtocolError or ReadError); it is retried once (see stream()).
_DROPPED = "terminated: the connection closed before the response was complete"


async def discover(access: ProviderAccess) -> DiscoveredModels:
    """The router's models as knightcode models (see :func:`discovered_models`).

    :raises DiscoveryError: the router is unreachable, not a router, or rejects the key
    """
    connection = resolve_connection(access.agent_dir, access.environ, access.api_key)
    try:
        async with RouterClient(connection, timeout=DISCOVERY_TIMEOUT) as client:
            state = await client.state()
    except RouterError as exc:
        raise DiscoveryError(str(exc)) from None
    return discovered_models(state.models, connection, state.autoload)


def connection_of(model: Model, api_key: str | None) -> Connection:
    """The router a discovered model lives on (its base URL is the router's ``/v1``)."""
    return Connection(model.base_url.removesuffix("/v1"), api_key)


async def stream(
    model: Model, context: Context, options: StreamOptions
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """Stream a chat reply from the router; failures end with a clear ``error`` event.

    A connection the router closed before answering is retried once at once: the b10434
    router drops about one kept-alive connection in a hundred, and a full agent retry (with its
    back-off) would be a needless wait.
    """
    # Imported here: loading the plugin (every start, --list-models) must not pay for the client.
    from knightcode import stream_openai_completions

    for attempt in (1, 2):
        started = False
        events = stream_openai_completions(model, context, options)
        async with contextlib.aclosing(events):
            async for event in events:
                if event["type"] == "start":
                    started = True
                elif event["type"] == "error" and event["reason"] == "error":
                    message = event["error"]
                    original = message.get("errorMessage") or ""
                    if attempt == 1 and not started and original.startswith(_DROPPED):
                        break
                    message["errorMessage"] = await _explain(model, options.api_key, original)
                yield event
            else:
                return


async def _explain(model: Model, api_key: str | None, original: str) -> str:
    """Rewrite a failed chat request's message so it says what to do.

    The agent classifies errors by their text (retry on connection errors, compact on context
    overflow), so the words it looks for are kept: "Connection error", llama.cpp's "exceeds the
    available context size" and the status code.
    """
    connection = connection_of(model, api_key)
    if original.startswith("401"):
        return str(Unauthorized(connection.base_url, api_key is not None))
    if original.startswith("Connection error"):
        return f"Connection error: {RouterUnreachable(connection.base_url, 'connection refused')}"
    if original.startswith(_DROPPED):
        # kept as is for the retry classification ("terminated"), with the router named
        return f"{original}: {RouterUnreachable(connection.base_url, 'the connection dropped')}"
    if "exceeds the available context size" in original:
        return (
            f"{original} — llama.cpp model {model.id!r} runs with a {model.context_window}-token "
            "context: compact the session, or start the router with a larger -c"
        )
    if "is not loaded" in original:
        return f"400: {ModelNotLoaded(model.id)}"
    if f"model '{model.id}' not found" in original:
        return f"400: {ModelNotFound(connection.base_url, model.id)}"
    if original[:1] in "45":
        # A model that autoloads and fails surfaces as a bare error: ask the router why.
        with contextlib.suppress(RouterError):
            async with RouterClient(connection, timeout=DISCOVERY_TIMEOUT) as client:
                entry = await client.get_model(model.id)
            if entry.failed and not entry.selectable:
                return f"{original.split(':', 1)[0]}: {load_failure(entry, client)}"
    return original


async def classify(
    model: Model, request: ClassifyRequest, access: ProviderAccess
) -> Classification:
    """Answer ``request`` with a decision model or a chat model, whichever ``model`` is."""
    from knightcode_builtins.llama_cpp.classify_chat import classify_with_chat_model
    from knightcode_builtins.llama_cpp.systemone import classify_with_decision_model

    connection = connection_of(model, access.api_key)
    try:
        async with RouterClient(connection) as client:
            if model.api == SYSTEM_ONE_API:
                return await classify_with_decision_model(client, model, request)
            if model.api == CLASSIFY_API:
                return await classify_with_chat_model(client, model, request)
    except RouterError as exc:
        raise ClassificationError(str(exc)) from None
    raise ClassificationError(f"{model.ref}: no classifier for API {model.api!r}")
