"""What plugins register through the ``register_*`` hooks.

Each registration hook receives a ``register`` callback that takes either one of these objects or
the same fields as keyword arguments::

    @hookimpl
    def register_commands(register):
        register(name="hello", description="Say hello", handler=say_hello)

The host records which plugin registered each name, so ``knightcode config list`` and conflict
warnings can name it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from knightcode._llm.classify import Classification, ClassifyRequest
    from knightcode._llm.discovery import DiscoveredModels, ProviderAccess
    from knightcode._llm.types import Context, Model, StreamOptions
    from knightcode._plugins.context import FlagValue, HookContext
    from knightcode._tools.context import ToolContext
    from knightcode._types.messages import ToolResult

__all__ = [
    "CommandDefinition",
    "CommandHandler",
    "Definition",
    "FlagDefinition",
    "OnUpdate",
    "ProviderDefinition",
    "ShortcutDefinition",
    "ToolDefinition",
    "ToolExecute",
]

OnUpdate = Callable[["ToolResult"], object]
"""``on_update(partial_result)``: a tool reports a partial result."""


class ToolExecute(Protocol):
    """``execute(tool_call_id, args, ctx, on_update)``: run one call of a tool, plain or
    ``async``. ``args`` are valid against the tool's ``parameters``; ``on_update(partial)``
    reports a partial result (e.g. output so far); the return value is the result.
    """

    def __call__(
        self,
        tool_call_id: str,
        args: dict[str, object],
        ctx: ToolContext,
        on_update: Callable[[ToolResult], object],
        /,
    ) -> ToolResult | Awaitable[ToolResult]: ...


class CommandHandler(Protocol):
    """``handler(args, ctx)``: a slash command, plain or ``async``; ``args`` is the text after
    the command name. What it returns is shown where the mode shows command output.
    """

    def __call__(self, args: str, ctx: HookContext, /) -> object: ...


class ProviderStream(Protocol):
    """``stream(model, context, options)``: the provider's events for one request (an async
    iterator, or an awaitable of one), ending with ``done`` or ``error``.
    """

    def __call__(self, model: Model, context: Context, options: StreamOptions, /) -> object: ...


Classifier = Callable[["Model", "ClassifyRequest", "ProviderAccess"], Awaitable["Classification"]]
ModelDescription = Mapping[str, object]
"""One model of a provider, in ``models.json``'s shape (``id``, ``name``, ``contextWindow`` …)."""


@dataclass(frozen=True)
class CommandDefinition:
    """A slash command such as ``/hello``.

    :param name: the command name without the slash
    :param handler: ``handler(args: str, ctx)``, plain or ``async def``
    :param description: one line shown in command lists
    """

    name: str
    handler: CommandHandler
    description: str = ""


@dataclass(frozen=True)
class FlagDefinition:
    """A command-line flag added by a plugin (``--name`` or ``--name VALUE``).

    :param name: the flag name without dashes, e.g. ``plan-mode``
    :param type: ``"boolean"`` for a switch, ``"string"`` for a flag taking a value
    :param default: the value when the flag is not given
    :param description: the help text shown by ``knightcode --help``
    """

    name: str
    type: Literal["boolean", "string"] = "boolean"
    default: FlagValue = None
    description: str = ""


@dataclass(frozen=True)
class ShortcutDefinition:
    """A key binding for the interactive UI, e.g. ``ctrl+shift+h``.

    :param key: the key id in the keybindings grammar
    :param handler: ``handler(ctx)``, plain or ``async def``
    :param description: shown by ``/hotkeys``
    """

    key: str
    handler: Callable[[HookContext], object]
    description: str = ""


@dataclass(frozen=True)
class ToolDefinition:
    """A tool the model can call.

    :param name: the tool name the model sees; a plugin tool named like a built-in tool replaces it
    :param description: what the tool does, for the model
    :param parameters: JSON schema of the arguments object
    :param execute: ``execute(tool_call_id, args, ctx, on_update)``, plain or ``async def``
    :param label: a short human label for displays
    :param execution_mode: ``"parallel"`` (default) or ``"sequential"`` when the tool must not run
        beside other tools of the same assistant message
    :param prompt_snippet: one line for the system prompt's tool list
    :param prompt_guidelines: extra guideline bullets for the system prompt
    :param prepare_arguments: ``prepare_arguments(args) -> args``, run on the raw arguments
        *before* they are validated against ``parameters``, to accept legacy or sloppy forms a
        strict schema would reject (the edit tool folds ``oldText``/``newText`` into ``edits``)
    :param host_access: run on this machine even when a sandbox is on: ``ctx.backend`` is then
        the local backend and ``ctx.cwd`` the host folder. Say so only when the tool must reach
        the host (a clipboard, a browser); ``knightcode config list`` lists such plugins
    :param default_active: False: the tool is available but not offered to the model until it
        is switched on (``--tools``, settings ``tools.enabled``, ``/tools``, a plugin's
        ``ctx.agent.set_active_tools``) — codemode's ``code`` tool, say
    """

    name: str
    description: str
    parameters: Mapping[str, object]
    execute: ToolExecute
    label: str | None = None
    execution_mode: Literal["parallel", "sequential"] = "parallel"
    prompt_snippet: str | None = None
    prompt_guidelines: tuple[str, ...] = ()
    prepare_arguments: Callable[[dict[str, object]], dict[str, object]] | None = None
    host_access: bool = False
    default_active: bool = True


@dataclass(frozen=True)
class ProviderDefinition:
    """A model provider (an endpoint plus its models).

    :param name: provider name used in ``provider/model`` ids
    :param api: wire protocol, ``"openai-completions"``, ``"anthropic-messages"``,
        ``"google-generative-ai"`` or ``"bedrock-converse-stream"``, or a custom one served by
        ``stream``
    :param base_url: endpoint base URL
    :param api_key: a literal key, an environment variable name, or ``!command``
    :param env_keys: environment variables that hold the key (used after ``auth.json``, like the
        built-in providers' ``OPENAI_API_KEY``); a provider with only these needs no key
    :param headers: extra request headers
    :param models: model descriptions (``id``, ``name``, ``contextWindow``, ``maxTokens`` …)
    :param stream: a custom streaming function for APIs knightcode has no client for
    :param discover: ``async discover(access) -> DiscoveredModels``: the models a live server
        offers, asked at run time (``ModelRegistry.refresh_models``, and lazily when a model of
        this provider is looked up); they come in addition to ``models``. Raise
        :class:`~knightcode._llm.discovery.DiscoveryError` with a message for the user when the
        server cannot be reached
    :param classify: ``async classify(model, request, access) -> Classification``: answers typed
        questions with one of this provider's classifier models (``ModelRegistry.classify``)
    :param login: ``login(ctx)``, plain or ``async def``: the interactive set-up run by
        ``/login <name>`` (ask for a URL or a key with ``ctx.ui`` and store it)
    """

    name: str
    api: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    env_keys: tuple[str, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)
    models: list[ModelDescription] = field(default_factory=list)
    stream: ProviderStream | None = None
    discover: Callable[[ProviderAccess], Awaitable[DiscoveredModels]] | None = None
    classify: Classifier | None = None
    login: Callable[[HookContext], Awaitable[None] | None] | None = None


Definition = (
    ToolDefinition | CommandDefinition | ProviderDefinition | FlagDefinition | ShortcutDefinition
)
"""Anything a ``register_*`` hook registers."""

REGISTRATION_KINDS: dict[str, type[Definition]] = {
    "register_tools": ToolDefinition,
    "register_commands": CommandDefinition,
    "register_providers": ProviderDefinition,
    "register_flags": FlagDefinition,
    "register_shortcuts": ShortcutDefinition,
}
"""Registration hook name -> the definition type its callback builds."""


def key_of(definition: object) -> str:
    """The name a definition is deduplicated by (``key`` for shortcuts, ``name`` otherwise)."""
    if isinstance(definition, ShortcutDefinition):
        return definition.key
    return str(getattr(definition, "name"))  # noqa: B009 - every other definition has a name
