"""builtin:llama.cpp — local models through a llama.cpp router, model management, classifiers.

* Provider ``llama.cpp``: the router's models, discovered at run time with their real context
  windows (``provider.discover``), chat through the router's OpenAI-compatible endpoint, and
  classifiers (decision models via ``/v1/systemone``, chat models via next-token probabilities).
* ``/llama``: the router's state; load, unload, download (``command.llama_command``).
* ``/login llama.cpp``: the router URL and optional key (``connection.login``).
* ``session_start`` / ``model_select``: keep the session's model loaded and its context window
  the server's (``session_model.sync_session_model``).

Switch it off with ``knightcode config disable builtin:llama.cpp`` or ``"-builtin:llama.cpp"``
in settings ``extensions``; see ``docs/llama-cpp.md``.

This module is imported on every start (``--help`` included), so the provider's functions are
thin wrappers that import the real code, httpx and all, on first use.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from knightcode import ProviderDefinition, hookimpl

if TYPE_CHECKING:
    from knightcode import (
        AssistantMessageEvent,
        Classification,
        ClassifyRequest,
        Context,
        DiscoveredModels,
        HookContext,
        Model,
        ProviderAccess,
        StreamOptions,
    )

__all__ = ["PROVIDER"]

PROVIDER = "llama.cpp"


async def _discover(access: ProviderAccess) -> DiscoveredModels:
    from knightcode_builtins.llama_cpp.provider import discover

    return await discover(access)


async def _stream(
    model: Model, context: Context, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    from knightcode_builtins.llama_cpp.provider import stream

    async for event in stream(model, context, options):
        yield event


async def _classify(
    model: Model, request: ClassifyRequest, access: ProviderAccess
) -> Classification:
    from knightcode_builtins.llama_cpp.provider import classify

    return await classify(model, request, access)


async def _login(ctx: HookContext) -> None:
    from knightcode_builtins.llama_cpp.connection import login

    await login(ctx)


async def _llama(args: str, ctx: HookContext) -> None:
    from knightcode_builtins.llama_cpp.command import llama_command

    await llama_command(args, ctx)


@hookimpl
def register_providers(register: Callable[..., None]) -> None:
    register(
        ProviderDefinition(
            name=PROVIDER,
            api="openai-completions",
            env_keys=("LLAMA_API_KEY",),
            stream=_stream,
            discover=_discover,
            classify=_classify,
            login=_login,
        )
    )


@hookimpl
def register_commands(register: Callable[..., None]) -> None:
    register(
        name="llama",
        description="llama.cpp router: show its models, load, unload or download one",
        handler=_llama,
    )


@hookimpl
async def session_start(ctx: HookContext) -> None:
    """Bring the session's llama.cpp model (if it is one) in step with the router; otherwise,
    when a person can pick models (``ctx.has_ui``), ask the router for its models in the
    background so the picker lists them without delaying start-up. A one-shot ``-p``/JSON run
    never picks another model, so it does not touch the router at all.
    """
    agent = ctx.agent
    if agent is not None and agent.model.provider == PROVIDER:
        from knightcode_builtins.llama_cpp.session_model import sync_session_model

        await sync_session_model(ctx)
    elif ctx.has_ui:
        from knightcode_builtins.llama_cpp.session_model import refresh_registry

        ctx.spawn(refresh_registry(ctx))  # owned by knightcode: cancelled when the session ends


@hookimpl
async def model_select(model: Model, ctx: HookContext) -> None:
    """A llama.cpp model was chosen: load it if the router autoloads, re-read its ``n_ctx``."""
    if model.provider == PROVIDER:
        from knightcode_builtins.llama_cpp.session_model import sync_session_model

        await sync_session_model(ctx)
