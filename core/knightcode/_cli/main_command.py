"""The main command, ``knightcode [OPTIONS] [MESSAGE...]``.

Plugins may add flags, so the command is built after the plugins are loaded: a prescan finds
``-e``, ``--no-extensions`` and ``--approve``, the host loads, and only then is the full parser
built — with the plugins' flags in ``--help`` like any other option.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click

from knightcode._cli.prescan import prescan
from knightcode._errors import ConfigError, NotAvailableError, UsageError
from knightcode._types.messages import THINKING_LEVELS, ThinkingLevel, thinking_level_of
from knightcode._version import __version__

if TYPE_CHECKING:
    from knightcode._plugins.context import FlagValue
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.planning import LoadPlan
MODES = ("text", "json", "rpc")
OFFLINE_ENV = "KNIGHTCODE_OFFLINE"
"""Set to ``1`` by ``--offline`` (or by the user): plugins skip start-up network operations."""
FLAG_PREFIX = "plugin_flag__"

EPILOG = """\b
Subcommands:
  knightcode config list [--json]   list plugins and whether they loaded
  knightcode config enable NAME     re-enable a plugin in the user settings
  knightcode config disable NAME    disable a plugin, e.g. builtin:llama.cpp
  knightcode trust [--revoke]       trust this project's .knightcode/ files
  knightcode doctor [--offline]     check every config file and provider
  knightcode login PROVIDER         log in (subscription) or store an API key; also logout

\b
A message that starts with a subcommand's name is sent with '--' first:
  knightcode -- "config the linter"
"""


@dataclass
class RunRequest:
    """Everything the command line asks of a run, validated; the modes consume it."""

    mode: str
    """``interactive``, ``text`` (print), ``json`` or ``rpc``."""
    messages: list[str]
    provider: str | None = None
    model: str | None = None
    provider_from_model: bool = False
    """The provider was split off ``--model provider/id`` (it may be part of an id after all)."""
    api_key: str | None = field(default=None, repr=False)
    """``--api-key``: the key of the chosen model's provider for this run only (never stored)."""
    thinking: ThinkingLevel | None = None
    temperature: float | None = None
    """``--temperature``: the sampling temperature (0 to 2) of every request (None: provider's)."""
    session: Path | None = None
    fork: Path | None = None
    """``--fork PATH|ID``: a new session file that starts as a copy of this session."""
    session_dir: Path | None = None
    no_session: bool = False
    continue_recent: bool = False
    resume: bool = False
    tools: list[str] | None = None
    no_tools: bool = False
    no_builtin_tools: bool = False
    system_prompt: str | None = None
    append_system_prompt: list[str] = field(default_factory=list)
    approve: bool = False
    extension_paths: list[Path] = field(default_factory=list)
    no_extensions: bool = False
    skill_paths: list[Path] = field(default_factory=list)
    """``--skill PATH``: skill files or directories, loaded even with ``--no-skills``."""
    no_skills: bool = False
    prompt_template_paths: list[Path] = field(default_factory=list)
    """``--prompt-template PATH``: template files or directories, also with ``-np``."""
    no_prompt_templates: bool = False
    """``-np``/``--no-prompt-templates``: no discovered prompt templates."""
    no_context_files: bool = False
    """``-nc``/``--no-context-files``: no AGENTS.md/CLAUDE.md in the system prompt."""
    verbose: bool = False
    """``--verbose``: the interactive start-up header even with setting ``quietStartup``."""
    offline: bool = False
    """``--offline``: no start-up network operations (``KNIGHTCODE_OFFLINE=1``, see run_main)."""
    theme: str | None = None
    """``--theme NAME|PATH``: the theme of this run (interactive mode), over setting ``theme``."""
    no_themes: bool = False
    """``--no-themes``: only the built-in themes (and a ``--theme`` file) are used."""
    fullscreen: bool = False
    """``--fullscreen``: the interactive UI in the alternate screen (setting ``fullscreen``)."""
    models: list[str] | None = None
    """``--models PATTERNS``: the model scope (cycling, start-up model) over ``enabledModels``."""
    list_models: str | None = None
    """``--list-models [SEARCH]``: print the usable models matching SEARCH ("" for all), exit."""
    export: str | None = None
    """``--export SESSION``: write the session's HTML viewer (to the first message, if any)."""
    plugin_flags: dict[str, FlagValue] = field(default_factory=dict)
    output: IO[bytes] | None = None
    """The real stdout, when it was taken over before plugins loaded (see ``run_main``)."""


def split_model(provider: str | None, model: str | None) -> tuple[str | None, str | None]:
    """``--model provider/id`` names the provider too, unless ``--provider`` is given (model ids
    may themselves contain slashes, e.g. ``openrouter`` ids).
    """
    if model and provider is None and "/" in model:
        head, tail = model.split("/", 1)
        if not head or not tail:
            raise UsageError(f"--model {model!r}: expected 'provider/model-id' or a model id")
        return head, tail
    return provider, model


def parse_tools(value: str) -> list[str]:
    """``--tools read,grep`` -> ``["read", "grep"]``; empty names are a mistake."""
    names = [name.strip() for name in value.split(",")]
    if not value.strip() or any(not name for name in names):
        raise UsageError(
            f"--tools {value!r}: expected a comma-separated list of tool names, e.g. read,grep,ls"
        )
    return names


def parse_model_patterns(value: str | None) -> list[str] | None:
    """``--models a,b:high`` -> ``["a", "b:high"]`` (None when not given).

    :raises UsageError: the value holds no pattern at all
    """
    if value is None:
        return None
    patterns = [pattern.strip() for pattern in value.split(",") if pattern.strip()]
    if not patterns:
        raise UsageError(f"--models {value!r}: expected comma-separated model patterns")
    return patterns


def prompt_text(value: str, flag: str) -> str:
    """``--system-prompt``/``--append-system-prompt``: the contents of the file when ``value``
    names an existing one (as the reference reads it), else the text itself.

    :raises UsageError: the file exists but cannot be read as UTF-8 text
    """
    try:
        path = Path(value).expanduser()
        is_file = "\n" not in value and path.is_file()
    except (OSError, ValueError):
        return value  # a long or odd text is no file name
    if not is_file:
        return value
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{flag} {value}: cannot read the file: {error}") from error


Params = Mapping[str, object]
"""The parsed options as click hands them to the command's callback (parameter name -> value)."""


def _wrong(key: str, value: object, expected: str) -> TypeError:
    # click's option types guarantee the shapes; this is a mistake in the option table.
    return TypeError(f"option {key!r}: expected {expected}, got {value!r}")


def _text(params: Params, key: str) -> str | None:
    value = params[key]
    if value is not None and not isinstance(value, str):
        raise _wrong(key, value, "text")
    return value


def _number(params: Params, key: str) -> float | None:
    value = params.get(key)
    if value is not None and not isinstance(value, float):
        raise _wrong(key, value, "a number")
    return value


def _path(params: Params, key: str) -> Path | None:
    value = params[key]
    if value is not None and not isinstance(value, Path):
        raise _wrong(key, value, "a path")
    return value


def _texts(params: Params, key: str) -> list[str]:
    value = params[key]
    texts = [item for item in value if isinstance(item, str)] if isinstance(value, tuple) else []
    if not isinstance(value, tuple) or len(texts) != len(value):
        raise _wrong(key, value, "a tuple of texts")
    return texts


def _paths(params: Params, key: str) -> list[Path]:
    value = params[key]
    paths = (
        [Path(item) for item in value if isinstance(item, (str, os.PathLike))]
        if isinstance(value, tuple)
        else []
    )
    if not isinstance(value, tuple) or len(paths) != len(value):
        raise _wrong(key, value, "a tuple of paths")
    return paths


def _flag_value(key: str, value: object) -> FlagValue:
    if value is not None and not isinstance(value, (str, bool)):
        raise _wrong(key, value, "a flag value")
    return value


_FORK_CONFLICTS = (
    ("session", "--session"),
    ("continue_recent", "--continue"),
    ("resume", "--resume"),
    ("no_session", "--no-session"),
)


def _check_conflicts(params: Params) -> None:
    pairs = [
        ("session", "no_session", "--session", "--no-session"),
        ("session", "continue_recent", "--session", "--continue"),
        ("session", "resume", "--session", "--resume"),
        ("continue_recent", "resume", "--continue", "--resume"),
        ("no_session", "continue_recent", "--no-session", "--continue"),
        ("no_session", "resume", "--no-session", "--resume"),
        ("tools", "no_tools", "--tools", "--no-tools"),
        *[("fork", other, "--fork", flag) for other, flag in _FORK_CONFLICTS],
    ]
    for left, right, left_flag, right_flag in pairs:
        if params.get(left) and params.get(right):
            raise UsageError(f"{left_flag} and {right_flag} cannot be used together")


def make_request(params: Params) -> RunRequest:
    """Validate the parsed options and decide the mode."""
    _check_conflicts(params)
    mode = _text(params, "mode")
    if params["print_mode"]:
        if mode == "rpc":
            raise UsageError("--print and --mode rpc cannot be used together")
        mode = mode or "text"
    messages = _texts(params, "messages")
    if mode is None:
        mode = "interactive"
    if mode == "rpc" and messages:
        raise UsageError(
            "--mode rpc takes no messages on the command line; send 'prompt' commands on stdin"
        )
    provider_flag = _text(params, "provider")
    provider, model = split_model(provider_flag, _text(params, "model"))
    # Flag names may hold dashes, which click turns into underscores in the parameter name.
    flags = {
        key[len(FLAG_PREFIX) :].replace("_", "-"): _flag_value(key, value)
        for key, value in params.items()
        if key.startswith(FLAG_PREFIX)
    }
    tools = _text(params, "tools")
    system = _text(params, "system_prompt")
    return RunRequest(
        mode=mode,
        messages=messages,
        provider=provider,
        model=model,
        provider_from_model=provider_flag is None and provider is not None,
        api_key=_text(params, "api_key") if "api_key" in params else None,
        thinking=thinking_level_of(params["thinking"]),
        temperature=_number(params, "temperature"),
        session=_path(params, "session"),
        fork=_path(params, "fork") if "fork" in params else None,
        session_dir=_path(params, "session_dir"),
        no_session=bool(params["no_session"]),
        continue_recent=bool(params["continue_recent"]),
        resume=bool(params["resume"]),
        tools=parse_tools(tools) if tools is not None else None,
        no_tools=bool(params["no_tools"]),
        no_builtin_tools=bool(params["no_builtin_tools"]),
        system_prompt=None if system is None else prompt_text(system, "--system-prompt"),
        append_system_prompt=[
            prompt_text(text, "--append-system-prompt")
            for text in _texts(params, "append_system_prompt")
        ],
        approve=bool(params["approve"]),
        extension_paths=[path.expanduser() for path in _paths(params, "extension")],
        no_extensions=bool(params["no_extensions"]),
        skill_paths=[path.expanduser() for path in _paths(params, "skill")],
        no_skills=bool(params["no_skills"]),
        prompt_template_paths=[path.expanduser() for path in _paths(params, "prompt_template")]
        if "prompt_template" in params
        else [],
        no_prompt_templates=bool(params.get("no_prompt_templates")),
        no_context_files=bool(params.get("no_context_files")),
        verbose=bool(params.get("verbose")),
        offline=bool(params.get("offline")),
        theme=_text(params, "theme"),
        no_themes=bool(params.get("no_themes")),
        fullscreen=bool(params.get("fullscreen")),
        list_models=_text(params, "list_models") if "list_models" in params else None,
        models=parse_model_patterns(_text(params, "models") if "models" in params else None),
        export=_text(params, "export") if "export" in params else None,
        plugin_flags=flags,
    )


def _options() -> list[click.Parameter]:
    path = click.Path(path_type=Path)
    return [
        click.Option(
            ["--mode"],
            type=click.Choice(MODES),
            default=None,
            help=(
                "Output mode: text (print the final answer), json (event stream), "
                "rpc (stdin/stdout protocol)."
            ),
        ),
        click.Option(
            ["-p", "--print", "print_mode"],
            is_flag=True,
            help="Answer the messages, print the final text and exit.",
        ),
        click.Option(
            ["--provider"],
            metavar="NAME",
            help="Model provider, e.g. anthropic, openai, llama.cpp.",
        ),
        click.Option(
            ["--model"],
            metavar="PATTERN",
            help="Model id, provider/id, or part of one (e.g. sonnet); ':LEVEL' sets thinking.",
        ),
        click.Option(
            ["--models"],
            metavar="PATTERNS",
            help=(
                "Models to cycle through (ctrl+p, RPC cycle_model), comma-separated: globs "
                "(anthropic/*), parts of ids (sonnet), ':LEVEL' suffixes; the first is the "
                "start-up model when --model is not given."
            ),
        ),
        click.Option(
            ["--api-key"],
            metavar="KEY",
            help="API key of the chosen model's provider, for this run only (never stored).",
        ),
        click.Option(
            ["--thinking"],
            type=click.Choice(THINKING_LEVELS),
            help="Thinking level for reasoning models.",
        ),
        click.Option(
            ["--temperature"],
            type=click.FloatRange(0, 2),
            metavar="NUMBER",
            help="Sampling temperature, 0-2 (lower: more deterministic); default: the provider's.",
        ),
        click.Option(
            ["--session"],
            type=path,
            metavar="PATH|ID",
            help="Open (or create) this session file, or the session with this id or id prefix.",
        ),
        click.Option(
            ["--fork"],
            type=path,
            metavar="PATH|ID",
            help="Start a new session as a copy of this session file, id or id prefix.",
        ),
        click.Option(
            ["--export"],
            metavar="SESSION",
            help="Write SESSION (path, id or id prefix) as an HTML viewer to OUT (the first "
            "message; default knightcode-session-<name>.html) and exit.",
        ),
        click.Option(
            ["--session-dir"], type=path, metavar="DIR", help="Keep session files in DIR."
        ),
        click.Option(["--no-session"], is_flag=True, help="Keep nothing on disk for this run."),
        click.Option(
            ["--fullscreen"],
            is_flag=True,
            help="Interactive mode in the alternate screen, with its own scrolling transcript.",
        ),
        click.Option(
            ["-c", "--continue", "continue_recent"],
            is_flag=True,
            help="Continue the most recent session in this folder.",
        ),
        click.Option(["-r", "--resume"], is_flag=True, help="Pick a session to resume."),
        click.Option(
            ["-e", "--extension"],
            type=path,
            multiple=True,
            metavar="PATH",
            help="Load the extension at PATH (repeatable; also with --no-extensions).",
        ),
        click.Option(
            ["-ne", "--no-extensions"],
            is_flag=True,
            help="Load no discovered extensions or plugin packages (built-ins and -e still load).",
        ),
        click.Option(
            ["--skill"],
            type=path,
            multiple=True,
            metavar="PATH",
            help="Load the skill file or directory at PATH (repeatable; also with --no-skills).",
        ),
        click.Option(
            ["-ns", "--no-skills"],
            is_flag=True,
            help="Load no discovered skills (--skill paths still load).",
        ),
        click.Option(
            ["--prompt-template"],
            type=path,
            multiple=True,
            metavar="PATH",
            help="Load the prompt template file or directory at PATH (repeatable; also with -np).",
        ),
        click.Option(
            ["-np", "--no-prompt-templates"],
            is_flag=True,
            help="Load no discovered prompt templates (--prompt-template paths still load).",
        ),
        click.Option(
            ["--theme"],
            metavar="NAME|PATH",
            help="Use this theme (a theme's name or a theme file) for this run.",
        ),
        click.Option(
            ["--no-themes"],
            is_flag=True,
            help="Discover no themes: only the built-in ones (and a --theme file).",
        ),
        click.Option(
            ["-t", "--tools"],
            metavar="LIST",
            help="Only these tools, comma-separated (e.g. read,grep,ls).",
        ),
        click.Option(["-nt", "--no-tools"], is_flag=True, help="Give the model no tools at all."),
        click.Option(
            ["-nbt", "--no-builtin-tools"],
            is_flag=True,
            help="Drop the built-in tools; plugin tools stay.",
        ),
        click.Option(
            ["--system-prompt"],
            metavar="TEXT|FILE",
            help="Replace the system prompt (with the file's contents when FILE exists).",
        ),
        click.Option(
            ["--append-system-prompt"],
            metavar="TEXT|FILE",
            multiple=True,
            help="Add TEXT (or the file's contents) to the system prompt (repeatable).",
        ),
        click.Option(
            ["-nc", "--no-context-files"],
            is_flag=True,
            help="Leave AGENTS.md and CLAUDE.md files out of the system prompt.",
        ),
        click.Option(
            ["--verbose"],
            is_flag=True,
            help="Show the start-up header even with setting quietStartup.",
        ),
        click.Option(
            ["--offline"],
            is_flag=True,
            help="No start-up network operations (sets KNIGHTCODE_OFFLINE=1 for plugins).",
        ),
        click.Option(
            ["--list-models"],
            is_flag=False,
            flag_value="",
            default=None,
            metavar="[SEARCH]",
            help="List the usable models (fuzzy SEARCH over provider and id) and exit.",
        ),
        click.Option(
            ["--approve"],
            is_flag=True,
            help="Trust this project's .knightcode/ files for this run only.",
        ),
        click.Option(
            ["-v", "--version"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_print_version,
            help="Show the version and exit.",
        ),
        click.Argument(["messages"], nargs=-1, metavar="[MESSAGE]..."),
    ]


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"knightcode {__version__}")
        ctx.exit()


def _plugin_options(host: PluginHost | None, taken: set[str]) -> list[click.Parameter]:
    """Click options for the flags plugins registered; a name clash with a built-in option is
    reported and the plugin's flag skipped.
    """
    if host is None:
        return []
    options: list[click.Parameter] = []
    for item in host.registrations.flags:
        flag = item.definition
        if flag.name in taken:
            host.warnings.append(
                f"{item.owner} registers flag --{flag.name}, which knightcode already has; ignored"
            )
            continue
        dest = FLAG_PREFIX + flag.name.replace("-", "_")
        help_text = f"{flag.description} [{item.owner}]".strip()
        if flag.type == "boolean":
            options.append(
                click.Option(
                    [f"--{flag.name}", dest],
                    is_flag=True,
                    default=bool(flag.default),
                    help=help_text,
                )
            )
        else:
            options.append(
                click.Option(
                    [f"--{flag.name}", dest], default=flag.default, metavar="VALUE", help=help_text
                )
            )
    return options


def build_command(host: PluginHost | None) -> click.Command:
    """The main click command, including the plugins' flags."""
    params = _options()
    taken = {
        opt.lstrip("-") for param in params if isinstance(param, click.Option) for opt in param.opts
    }
    params += _plugin_options(host, taken)
    return click.Command(
        "knightcode",
        params=params,
        callback=lambda **values: make_request(values),
        help="knightcode: a coding agent for your terminal.\n\nStarts an interactive session, "
        "or with -p / --mode answers MESSAGE and exits. '@file' messages attach files.",
        epilog=EPILOG,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )


def load_plugins(args: list[str]) -> tuple[LoadPlan | None, PluginHost | None]:
    """Plan and load the plugins this command line asks for.

    A configuration error is fatal for a run but only a warning for ``--help``, which must work
    whatever state the configuration is in.
    """
    from knightcode._config.paths import agent_dir
    from knightcode._plugins.loader import noting_interrupts
    from knightcode._plugins.planning import HostOptions, create_plugin_host, make_plan

    scan = prescan(args)
    wants_help = any(arg in ("-h", "--help") for arg in args)
    try:
        options = HostOptions(
            cwd=Path.cwd(),
            agent_dir=agent_dir(),
            extension_paths=tuple(scan.extension_paths),
            no_extensions=scan.no_extensions,
            approve=scan.approve,
        )
        plan = make_plan(options)
    except ConfigError as error:
        if not wants_help:
            raise
        warn(str(error))
        return None, None
    if plan.errors and not wants_help:
        raise plan.errors[0]
    with noting_interrupts():
        return plan, create_plugin_host(options, plan)


def warn(message: str) -> None:
    """One warning line on stderr."""
    print(f"knightcode: warning: {message}", file=sys.stderr)


def run_main(args: list[str]) -> int:
    """Parse ``args`` with the plugins loaded and start the requested mode; returns the exit
    status.

    In ``-p``, ``--mode json`` and ``--mode rpc`` stdout is taken over before any plugin is
    imported: knightcode keeps the real one, and what plugins print goes to stderr.
    """
    output = None
    scan = prescan(args)
    if scan.offline:
        # Before any plugin is imported: they read it at load time as well as later.
        os.environ[OFFLINE_ENV] = "1"
    if scan.owns_stdout:
        from knightcode._modes.stdout import take_stdout

        output = take_stdout()
    plan, host = load_plugins(args)
    command = build_command(host)
    if host is not None:
        for message in [*host.warnings, *host.registrations.conflicts]:
            warn(message)
        host.warnings.clear()
    request = command.main(args, prog_name="knightcode", standalone_mode=False)
    if request is None or isinstance(request, int):
        return 0  # --help or --version already answered
    assert plan is not None and host is not None
    host.flag_values.update(request.plugin_flags)
    host.model_patterns = request.models
    request.output = output
    return start(request, host, plan)


def read_piped_stdin() -> str | None:
    """What was piped to stdin, for ``-p`` without a message (None for a terminal or nothing)."""
    stream = sys.stdin
    if stream is None or stream.closed or stream.isatty():
        return None
    try:
        text = stream.read()
    except (OSError, ValueError):
        return None
    return text if text.strip() else None


def start(request: RunRequest, host: PluginHost, plan: LoadPlan) -> int:
    """Hand the request to its mode."""
    if request.list_models is not None:
        import asyncio

        from knightcode._cli.list_models import list_models

        return asyncio.run(list_models(request, host, plan))
    if request.export is not None:
        from knightcode._modes.export_cli import run_export

        return run_export(request, plan.settings)
    if request.mode in ("text", "json"):
        import asyncio

        from knightcode._modes.attachments import split_arguments
        from knightcode._modes.print_mode import run_print_session

        prompts = split_arguments(
            list(request.messages), Path.cwd(), auto_resize=plan.settings.model.images.auto_resize
        )
        piped = read_piped_stdin()
        if piped is not None:
            # Piped input leads the first message, like a file attached to it.
            first = prompts.messages[0] if prompts.messages else ""
            prompts.messages[:1] = [piped + ("\n\n" + first if first else "")]
        if not prompts.messages:
            raise UsageError(f"--mode {request.mode} needs a message (or piped input on stdin)")
        return asyncio.run(run_print_session(request, host, plan, prompts))
    if request.mode == "rpc":
        import asyncio

        from knightcode._modes.rpc import run_rpc_session

        return asyncio.run(run_rpc_session(request, host, plan))
    if request.mode == "interactive":
        import asyncio

        from knightcode._modes.interactive import run_interactive

        return asyncio.run(run_interactive(request, host, plan))
    described = f"--mode {request.mode}"
    raise NotAvailableError(
        f"{described} is not available in knightcode {__version__} yet; use -p or --mode json"
    )
