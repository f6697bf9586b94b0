"""Building an :class:`~knightcode._agent.session.AgentSession` from a command line.

Everything a run needs is decided here, in one place, with a clear error for each way it can
be impossible: which session file, which model (``--model`` > the session's last model >
settings > the first provider with a key), which tools, which execution backend, and the system
prompt (SYSTEM.md, APPEND_SYSTEM.md, context files, ``--system-prompt``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._errors import ConfigError, UsageError
from knightcode._modes.thinking_start import start_thinking_level
from knightcode._types.messages import ThinkingLevel, thinking_level_of

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._cli.main_command import RunRequest
    from knightcode._config.loading import Settings
    from knightcode._llm.registry import ModelRegistry
    from knightcode._llm.types import Model
    from knightcode._plugins.context import SessionMode
    from knightcode._plugins.definitions import ToolDefinition
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.planning import LoadPlan
    from knightcode._resources.discovery import ResourceSet
    from knightcode._session.context import ModelRef
    from knightcode._session.manager import SessionManager
    from knightcode._session.notices import SessionNotice
    from knightcode._tools.backend import ExecutionBackend

NO_MODEL = (
    "no model available: set an API key such as ANTHROPIC_API_KEY or OPENAI_API_KEY, or describe "
    "an endpoint in {models} (see docs/models.md), then pick it with --model provider/id"
)


def open_session(
    request: RunRequest, cwd: Path, agent_dir: Path, settings: Settings
) -> SessionManager:
    """The session file this run writes to.

    :raises SessionPathError: the session directory is a file, or ``--session`` names a
        directory, a device or a file that is not a session (checked before any model call:
        sessions are written only after the first answer)
    """
    from knightcode._session.errors import SessionPathError
    from knightcode._session.location import resolve_session_dir, session_dir_problem
    from knightcode._session.manager import SessionManager

    if request.no_session:
        return SessionManager.in_memory(cwd)
    session_dir = resolve_session_dir(
        cwd, agent_dir, cli_dir=request.session_dir, settings_dir=settings.session_dir(cwd)
    )
    problem = session_dir_problem(session_dir)
    if problem is not None:
        raise SessionPathError(problem)
    if request.fork is not None:
        from knightcode._session.location import sessions_root
        from knightcode._session.lookup import named_session

        source = named_session(request.fork, session_dir, sessions_root(agent_dir), "--fork")
        if not source.path.is_file():
            raise UsageError(f"--fork {request.fork}: no such session file ({source.path})")
        return SessionManager.fork_from(source.path, cwd, session_dir)
    if request.session is not None:
        return _open_named_session(request.session, cwd, agent_dir, session_dir)
    if request.continue_recent:
        return SessionManager.continue_recent(cwd, session_dir)
    if request.resume:
        raise UsageError(
            "--resume picks a session in the interactive UI's session picker; without it use "
            "-c (the most recent session here), --session ID or --fork ID"
        )
    return SessionManager.create(cwd, session_dir)


def _open_named_session(
    named: Path, cwd: Path, agent_dir: Path, session_dir: Path
) -> SessionManager:
    """``--session``: a session file, or the session with this id or unique id prefix; one of
    another project is forked into this one, as the reference does.
    """
    from knightcode._session.location import sessions_root
    from knightcode._session.lookup import named_session
    from knightcode._session.manager import SessionManager

    found = named_session(named, session_dir, sessions_root(agent_dir))
    if found.other_project is None:
        return SessionManager.open(found.path, session_dir)
    print(
        f"knightcode: session {found.path.name} belongs to {found.other_project}; "
        "continuing in a copy for this folder",
        file=sys.stderr,
    )
    return SessionManager.fork_from(found.path, cwd, session_dir)


async def choose_model(
    request: RunRequest,
    registry: ModelRegistry,
    recorded: ModelRef | None,
    settings: Settings,
    agent_dir: Path,
) -> tuple[Model, ThinkingLevel | None]:
    """The model: ``--model``/``--provider``, else the session's (``recorded``), else the first of
    the model scope (``--models``/``enabledModels``), else settings, else the first model whose
    provider has a key; with the thinking level a ``PATTERN:LEVEL`` suffix asks for.
    """
    if request.model:
        return await model_from_flag(request, registry)
    if request.provider is None and recorded is None:
        from knightcode._modes.scope_start import first_of_scope

        first = await first_of_scope(registry, request.models, settings.model.enabled_models)
        if first is not None:
            return first.model, first.thinking
    return await _model_without_flag(request, registry, recorded, settings, agent_dir), None


async def model_from_flag(
    request: RunRequest, registry: ModelRegistry
) -> tuple[Model, ThinkingLevel | None]:
    """``--model``: an exact id first (asking discovering providers), else the reference's fuzzy
    match (:mod:`knightcode._llm.model_match`) within the provider, then — when the provider was
    only split off the value — over every model with the whole value.

    :raises UsageError: nothing matches (the exact look-up's message, which lists models)
    """
    from knightcode._llm.model_match import parse_model_pattern

    assert request.model is not None
    try:
        return await registry.resolve(request.model, request.provider), None
    except UsageError as error:
        unmatched = error
    models = registry.models
    found = None
    if request.provider is None:
        found = parse_model_pattern(request.model, models)
    else:
        if request.provider in registry.providers:
            own = [model for model in models if model.provider == request.provider]
            found = parse_model_pattern(request.model, own)
        if found is None and request.provider_from_model:
            found = parse_model_pattern(f"{request.provider}/{request.model}", models)
    if found is None:
        raise unmatched
    return found.model, found.thinking


async def _model_without_flag(
    request: RunRequest,
    registry: ModelRegistry,
    recorded: ModelRef | None,
    settings: Settings,
    agent_dir: Path,
) -> Model:
    if request.provider:
        if request.provider not in registry.providers:
            raise UsageError(
                f"unknown provider {request.provider!r}; known: {', '.join(registry.providers)}"
            )
        chosen = await registry.default_model(request.provider, None)
        if chosen is None or chosen.provider != request.provider:
            reasons = registry.unavailable_reasons(request.provider)
            if reasons:  # e.g. a llama.cpp router with nothing loaded: say how to load one
                listing = "".join(f"\n  {model_id}: {why}" for model_id, why in reasons.items())
                raise UsageError(f"provider {request.provider!r} has no model ready:{listing}")
            raise ConfigError(f"provider {request.provider!r} has no models")
        return chosen
    if recorded is not None:
        found = await registry.find(recorded.provider, recorded.model_id)
        if found is not None:
            return found
    model = settings.model
    chosen = await registry.default_model(model.default_provider, model.default_model)
    if chosen is None:
        raise ConfigError(NO_MODEL.format(models=agent_dir / "models.json"))
    return chosen


def available_tools(
    host: PluginHost | None,
) -> tuple[dict[str, ToolDefinition], dict[str, str]]:
    """Every tool a session here could offer (built-ins, then plugin tools; a plugin tool named
    like a built-in replaces it) and the plugin each plugin tool comes from.
    """
    from knightcode._tools import create_builtin_tools

    every: dict[str, ToolDefinition] = dict(create_builtin_tools())
    origins: dict[str, str] = {}
    for item in host.registrations.tools if host else ():
        every[item.definition.name] = item.definition
        origins[item.definition.name] = item.owner
    return every, origins


def choose_tools(
    request: RunRequest, host: PluginHost | None, settings: Settings
) -> dict[str, ToolDefinition]:
    """The active tools: ``--tools`` is an allow-list over built-in and plugin tools; otherwise
    the default built-ins (settings ``defaultTools``) plus every plugin tool but those registered
    with ``default_active=False``, then settings ``tools.enabled`` switches single tools on or off
    (names of tools that are not there, say of a plugin switched off, are ignored). A plugin tool
    named like a built-in replaces it.
    """
    every, origins = available_tools(host)
    return {name: every[name] for name in active_tool_names(request, every, origins, settings)}


def active_tool_names(
    request: RunRequest,
    every: dict[str, ToolDefinition],
    origins: dict[str, str],
    settings: Settings,
) -> list[str]:
    """The names :func:`choose_tools` activates, out of :func:`available_tools`' result.

    :raises UsageError: ``--tools`` names a tool that is not there
    :raises ConfigError: settings ``defaultTools`` names a tool that is not a built-in
    """
    from knightcode._tools import BUILTIN_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS

    if request.no_tools:
        return []
    if request.tools is not None:
        unknown = [name for name in request.tools if name not in every]
        if unknown:
            raise UsageError(
                f"--tools: unknown tool {', '.join(map(repr, unknown))}; "
                f"available: {', '.join(sorted(every))}"
            )
        return list(request.tools)
    builtins: list[str] = (
        []
        if request.no_builtin_tools
        else list(settings.model.default_tools or DEFAULT_ACTIVE_TOOLS)
    )
    unknown = [name for name in builtins if name not in every]
    if unknown:
        raise ConfigError(
            f"settings defaultTools: unknown tool {', '.join(map(repr, unknown))}; "
            f"built-in tools: {', '.join(BUILTIN_TOOL_NAMES)}"
        )
    names = list(builtins)
    names += [
        name
        for name in origins
        if (name not in BUILTIN_TOOL_NAMES or name in builtins)
        and name not in names
        and every[name].default_active
    ]
    for name, enabled in settings.model.tools.enabled.items():
        if name not in every:
            continue
        if enabled and name not in names:
            names.append(name)
        elif not enabled and name in names:
            names.remove(name)
    return names


def system_prompt(
    request: RunRequest,
    cwd: Path,
    agent_dir: Path,
    trusted: bool,
    tools: dict[str, ToolDefinition],
    warnings: list[str],
    resources: ResourceSet | None = None,
) -> str:
    """The system prompt from SYSTEM.md/APPEND_SYSTEM.md, the command line, context files and
    the skills (listed only with the ``read`` tool active: the model loads a skill by reading it).

    Context files skipped for safety are reported in ``warnings``.
    """
    from knightcode._config.context_files import discover_context_files
    from knightcode._config.system_prompt import build_system_prompt, load_prompt_files
    from knightcode._resources.skills import format_skills_for_prompt

    files = load_prompt_files(agent_dir, cwd, project_trusted=trusted)
    append = [text for text in (files.append, *request.append_system_prompt) if text]
    described = [(name, _one_line(tool)) for name, tool in tools.items()]
    return build_system_prompt(
        cwd=cwd,
        tools=described,
        context_files=[]
        if request.no_context_files
        else discover_context_files(agent_dir, cwd, warnings),
        system_override=request.system_prompt
        if request.system_prompt is not None
        else files.system,
        append=append,
        skills=format_skills_for_prompt(resources.skills) if resources and "read" in tools else "",
    )


def prompt_builder(
    request: RunRequest,
    cwd: Path,
    agent_dir: Path,
    trusted: bool,
    backend: ExecutionBackend,
    resources: Callable[[], ResourceSet | None] = lambda: None,
) -> Callable[[dict[str, ToolDefinition]], str]:
    """Builds the system prompt again for another set of active tools (``set_active_tools``);
    the warnings about skipped context files were reported at start and are not repeated.

    :param resources: the session's current skills (they change on ``/reload``)
    """

    def build(tools: dict[str, ToolDefinition]) -> str:
        prompt = system_prompt(request, cwd, agent_dir, trusted, tools, [], resources())
        return with_agent_cwd(prompt, backend, cwd)

    return build


async def load_resources(
    request: RunRequest, host: PluginHost, settings: Settings, *, trusted: bool, reload: bool
) -> ResourceSet:
    """The session's skills and prompt templates (after asking plugins, ``resources_discover``);
    what to tell the user about them is in the result's ``warnings``.
    """
    from knightcode._resources.discovery import discover_resources, settings_sources

    assert host.options is not None
    cwd = host.options.cwd
    found = await host.hooks.resources_discover(cwd=cwd, reason="reload" if reload else "startup")
    sources = settings_sources(
        host.options.agent_dir,
        cwd,
        settings,
        trusted=trusted,
        plugin_skills=[("plugin", cwd / path) for item in found for path in item.skill_paths],
        plugin_prompts=[("plugin", cwd / path) for item in found for path in item.prompt_paths],
        cli_skills=request.skill_paths,
        no_skills=request.no_skills,
        cli_prompts=request.prompt_template_paths,
        no_prompts=request.no_prompt_templates,
    )
    found_resources = discover_resources(sources)
    found_resources.plugin_themes = [
        ("plugin", cwd / path) for item in found for path in item.theme_paths
    ]
    found_resources.skill_commands = settings.model.enable_skill_commands
    return found_resources


def placeholder_model() -> Model:
    """The model of an interactive session that has none yet: the UI opens anyway and says how
    to get one (``/login``, ``/model``, ``/llama``); nothing is ever sent to it.
    """
    from knightcode._llm.types import Model

    return Model(provider="", id="", name="no model", api=NO_MODEL_API, base_url="")


NO_MODEL_API = "none"


def model_registry(host: PluginHost, settings: Settings, agent_dir: Path) -> ModelRegistry:
    """The model registry of a run: built-in, plugin and models.json providers, with the HTTP
    and retry settings (also what ``--list-models`` lists, without building an agent).
    """
    from knightcode._llm.registry import ModelRegistry

    model_settings = settings.model
    return ModelRegistry(
        agent_dir,
        providers=[item.definition for item in host.registrations.providers],
        http_idle_timeout_ms=model_settings.http_idle_timeout_ms,
        proxy=model_settings.http_proxy,
        max_retry_delay_ms=model_settings.retry.provider.max_retry_delay_ms,
        max_retries=model_settings.retry.provider.max_retries,
        request_timeout_ms=model_settings.retry.provider.timeout_ms,
    )


async def build_agent(
    request: RunRequest, host: PluginHost, plan: LoadPlan, *, allow_no_model: bool = False
) -> AgentSession:
    """Everything a run needs, assembled; see the module docstring.

    :param allow_no_model: when no model is usable, start with :func:`placeholder_model`
        instead of failing (interactive mode, where the user can fix that from inside)
    """
    from knightcode._agent.retry import RetrySettings
    from knightcode._agent.session import AgentSession, AgentSessionOptions
    from knightcode._agent.tool_set import ToolSet

    assert host.options is not None and host.context is not None
    cwd, agent_dir = host.options.cwd, host.options.agent_dir
    settings = plan.settings
    model_settings = settings.model
    host.hook_timeout = model_settings.hook_timeout_ms / 1000 or None
    registry = model_registry(host, settings, agent_dir)
    for problem in registry.load_errors:
        host.warnings.append(problem)
    if registry.auth is not None:
        registry.auth.check()  # a broken auth.json is a configuration error (exit 2), up front
    host.context.bind_models(registry)
    if request.api_key and request.provider:
        # Before the model is chosen: with the key, the provider's models become available.
        registry.set_runtime_api_key(request.provider, request.api_key)
    session = open_session(request, cwd, agent_dir, settings)
    # The context is built once here: on a long session it is the costliest step of start-up.
    context = session.build_context()
    try:
        model, flag_thinking = await choose_model(
            request, registry, context.model, settings, agent_dir
        )
    except ConfigError:
        if not allow_no_model or request.model:
            raise
        model, flag_thinking = placeholder_model(), None
    if request.api_key:
        if not model.provider:
            raise UsageError("--api-key needs a model: pick one with --model or --provider")
        registry.set_runtime_api_key(model.provider, request.api_key)
    every, origins = available_tools(host)
    # Decided before the backend starts: a wrong --tools must not cost a sandbox start.
    names = active_tool_names(request, every, origins, settings)
    backend = await choose_backend(host, settings, cwd)
    entries = session.get_entries()
    recorded = any(entry.get("type") == "thinking_level_change" for entry in entries)
    thinking = start_thinking_level(
        model,
        model_settings,
        explicit=request.thinking or flag_thinking,
        recorded=thinking_level_of(context.thinking_level) if recorded else None,
        resumed=bool(entries),
    )
    retry = model_settings.retry
    resources = await load_resources(
        request, host, settings, trusted=plan.trust.trusted, reload=False
    )
    host.warnings.extend(resources.warnings)
    holder: list[AgentSession] = []
    build_prompt = prompt_builder(
        request,
        cwd,
        agent_dir,
        plan.trust.trusted,
        backend,
        lambda: holder[0].resources if holder else resources,
    )
    tools = {name: every[name] for name in names}
    prompt = with_agent_cwd(
        system_prompt(request, cwd, agent_dir, plan.trust.trusted, tools, host.warnings, resources),
        backend,
        cwd,
    )
    agent = AgentSession(
        AgentSessionOptions(
            cwd=cwd,
            agent_dir=agent_dir,
            session=session,
            models=registry,
            model=model,
            tools=tools,
            system_prompt=prompt,
            tool_set=ToolSet(every, origins, names, prompt, build_prompt),
            backend=backend,
            hooks=host.hooks,
            hook_context=host.context,
            context=context,
            thinking_level=thinking,
            default_thinking_level=model_settings.default_thinking_level,
            model_thinking_levels=model_settings.model_thinking_levels,
            thinking_budgets=thinking_budgets(settings),
            temperature=request.temperature,
            retry=RetrySettings(
                retry.enabled, retry.max_retries, retry.base_delay_ms, retry.max_agent_delay_ms
            ),
            block_images=model_settings.images.block_images,
            auto_resize_images=model_settings.images.auto_resize,
            steering_mode=model_settings.steering_mode,
            follow_up_mode=model_settings.follow_up_mode,
            tool_timeout_ms=model_settings.tool_timeout_ms,
            idle_timeout_ms=model_settings.http_idle_timeout_ms,
            auto_compaction=model_settings.compaction.enabled,
            shell_path=model_settings.shell_path,
            shell_command_prefix=model_settings.shell_command_prefix,
            resources=resources,
        )
    )
    holder.append(agent)
    host.context.bind_session(agent, backend, mode=session_mode(request.mode))
    return agent


def thinking_budgets(settings: Settings) -> dict[str, int]:
    """Settings ``thinkingBudgets``: the levels the user set a budget for (the others keep the
    provider's default budget).
    """
    budgets = settings.model.thinking_budgets
    levels = {
        "minimal": budgets.minimal,
        "low": budgets.low,
        "medium": budgets.medium,
        "high": budgets.high,
    }
    return {level: value for level, value in levels.items() if value is not None}


async def choose_backend(host: PluginHost, settings: Settings, cwd: Path) -> ExecutionBackend:
    """The execution backend a plugin chose (ready: prepared), or the local one.

    Fails closed: settings that ask for a sandbox (``sandbox.backend`` other than ``local``)
    with no plugin to provide one, or a backend that cannot start, refuse the run — tools must
    never quietly run on the host instead.

    :raises ConfigError: as above
    """
    from knightcode._tools import LocalBackend
    from knightcode._tools.backend import PreparedBackend

    backend = await host.hooks.execution_backend()
    if backend is None:
        wanted = settings.get("sandbox.backend")
        if isinstance(wanted, str) and wanted not in ("", "local"):
            raise ConfigError(
                f'settings sandbox.backend is "{wanted}" but no plugin provides a sandbox '
                "(is builtin:gondolin disabled? see 'knightcode config list'); refusing to "
                "run the tools on this machine instead"
            )
        return LocalBackend(cwd)
    if isinstance(backend, PreparedBackend):
        try:
            await backend.prepare()
        except BaseException as error:
            # Whatever it started (a container, a VM) goes with the refused session.
            await backend.aclose()
            if isinstance(error, ConfigError) or not isinstance(error, Exception):
                raise
            # A sandbox that cannot start, or leaks, refuses the session.
            raise ConfigError(f"the sandbox cannot start: {error}") from error
    return backend


def with_agent_cwd(prompt: str, backend: ExecutionBackend, cwd: Path) -> str:
    """The system prompt naming the working directory as the tools see it (``/workspace``
    under a sandbox, with the host folder it is mounted from).
    """
    from knightcode._tools.backend import agent_cwd

    seen = agent_cwd(backend, cwd)
    if seen == cwd:
        return prompt
    line = f"Current working directory: {cwd.as_posix()}"
    name = getattr(backend, "name", "sandbox")
    return prompt.replace(
        line,
        f"Current working directory: {seen.as_posix()} (sandbox: {name}; mounted from the "
        f"host folder {cwd.as_posix()})",
    )


def report_session_notices(
    agent: AgentSession, write_record: Callable[[Mapping[str, object]], None] | None
) -> None:
    """Tell the user about every session repair and failed write, now and for the rest of the
    run: one line on stderr each and, in JSON and RPC modes, a record (``write_record``).
    """

    def deliver(notice: SessionNotice) -> None:
        print(notice.line, file=sys.stderr, flush=True)
        if write_record is not None:
            write_record(notice.record())

    agent.session.set_notice_listener(deliver)


def _one_line(tool: ToolDefinition) -> str:
    """How the system prompt's tool list describes a tool."""
    if tool.prompt_snippet:
        return tool.prompt_snippet
    lines = tool.description.strip().splitlines()
    return lines[0] if lines else tool.name


def session_mode(mode: str) -> SessionMode:
    """The request's mode as plugins see it (:attr:`HookContext.mode`)."""
    modes: dict[str, SessionMode] = {"interactive": "interactive", "json": "json", "rpc": "rpc"}
    return modes.get(mode, "text")
