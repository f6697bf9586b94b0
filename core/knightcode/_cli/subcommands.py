"""``knightcode config …`` and ``knightcode trust``: managing plugins and project trust."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from knightcode._errors import SettingsError, UsageError

if TYPE_CHECKING:
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.planning import HostOptions
    from knightcode_builtins.mcp.config import ServerConfig


def _options(approve: bool = False, extensions: tuple[Path, ...] = ()) -> HostOptions:
    from knightcode._config.paths import agent_dir
    from knightcode._plugins.planning import HostOptions

    return HostOptions(
        cwd=Path.cwd(), agent_dir=agent_dir(), approve=approve, extension_paths=extensions
    )


def _load_host(approve: bool, extensions: tuple[Path, ...]) -> PluginHost:
    from knightcode._plugins.planning import create_plugin_host, make_plan

    options = _options(approve, extensions)
    plan = make_plan(options)
    for error in plan.errors:
        print(f"knightcode: warning: {error}", file=sys.stderr)
    # Load failures are part of the listing; don't also print them as they happen.
    return create_plugin_host(options, plan, on_failure=lambda failure: None)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def subcommands() -> None:
    """Knightcode subcommands."""


@subcommands.group()
def config() -> None:
    """List plugins and turn them on or off."""


@config.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--approve",
    is_flag=True,
    help="Include this project's extensions without trusting it permanently.",
)
@click.option(
    "-e",
    "--extension",
    "extensions",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Also load the extension at PATH, to check that it loads (repeatable).",
)
def config_list(as_json: bool, approve: bool, extensions: tuple[Path, ...]) -> None:
    """Every plugin: name, kind, source, whether it is enabled, and why it failed if it did;
    then the skills and prompt templates (kind ``skill``/``prompt``, source their file, or for
    a package's the package and the resource's path in it) and the package resources that are
    disabled.
    """
    host = _load_host(approve, tuple(path.expanduser() for path in extensions))
    for warning in host.warnings:
        print(f"knightcode: warning: {warning}", file=sys.stderr)
    from knightcode._cli.resource_rows import resource_rows

    assert host.options is not None and host.context is not None  # built from options above
    try:
        host.context.settings.model  # noqa: B018 - validates every value
    except SettingsError as error:  # the listing still helps; say what is wrong and where
        print(
            f"knightcode: warning: {error} (knightcode doctor checks every file)", file=sys.stderr
        )
    resources = resource_rows(host.options, host.context.settings, host.context.project_trusted)
    host_access = _host_access_tools(host)
    if as_json:
        records = []
        for record in host.records:
            item = record.as_json()
            if record.name in host_access:
                item["hostAccess"] = host_access[record.name]
            records.append(item)
        records += [row.as_json() for row in resources]
        json.dump(records, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("NAME", "KIND", "STATUS", "SOURCE"):
        table.add_column(column, overflow="fold")
    for record in host.records:
        table.add_row(record.name, record.kind.value, record.status.value, record.source)
        if record.error:
            table.add_row("", "", "", f"  {record.error}")
        if record.name in host_access:
            tools = ", ".join(host_access[record.name])
            table.add_row("", "", "", f"  host access: {tools} (runs outside any sandbox)")
    for row in resources:
        table.add_row(row.name, row.kind, row.status, row.source)
    console = Console(highlight=False, soft_wrap=False)
    if not host.records and not resources:
        console.print("no plugins found")
        return
    console.print(table)


def _host_access_tools(host: PluginHost) -> dict[str, list[str]]:
    """The tools that asked to run on the host even under a sandbox, by plugin."""
    found: dict[str, list[str]] = {}
    for item in host.registrations.tools:
        if item.definition.host_access:
            found.setdefault(item.owner, []).append(item.definition.name)
    return found


def _resolve_name(name: str) -> str:
    """Accept ``llama.cpp`` for ``builtin:llama.cpp``; refuse names that match nothing."""
    from knightcode._plugins.discovery import KNOWN_BUILTINS, matches_block
    from knightcode._plugins.planning import make_plan

    plan = make_plan(_options(approve=True))
    if any(matches_block(candidate, name) for candidate in plan.found):
        return name
    if name.removeprefix("builtin:") in KNOWN_BUILTINS:
        return name if name.startswith("builtin:") else f"builtin:{name}"
    if any(candidate.name == f"plugin:{name}" for candidate in plan.found):
        return f"plugin:{name}"
    raise UsageError(f"unknown plugin {name!r}; 'knightcode config list' shows the names")


def _toggle(name: str, enabled: bool) -> None:
    from knightcode._config.edit_settings import set_plugin_enabled
    from knightcode._config.paths import agent_dir

    resolved = _resolve_name(name)
    settings_path = agent_dir() / "settings.json"
    changed = set_plugin_enabled(settings_path, resolved, enabled)
    verb = "enabled" if enabled else "disabled"
    if changed:
        click.echo(f"{verb} {resolved} (in {settings_path})")
    else:
        click.echo(f"{resolved} was already {verb} in {settings_path}")


_RESOURCE = click.argument("resource", required=False)
_LOCAL = click.option(
    "-l", "--local", is_flag=True, help="Edit the package's entry in the project's settings."
)


def _toggle_either(name: str, resource: str | None, enabled: bool, local: bool) -> None:
    """A plugin (NAME alone) or a package's resource (NAME is the package, then KIND/NAME)."""
    if resource is None:
        if local:
            raise UsageError("-l applies to a package's resource: SOURCE KIND/NAME -l")
        _toggle(name, enabled)
        return
    from knightcode._cli.packages import toggle_resource

    toggle_resource(name, resource, on=enabled, local=local)


@config.command("enable")
@click.argument("name")
@_RESOURCE
@_LOCAL
def config_enable(name: str, resource: str | None, local: bool) -> None:
    """Enable plugin NAME (remove its '-NAME' entry from the user settings), or with RESOURCE
    one resource of package NAME (e.g. git:github.com/me/pack skills/review).
    """
    _toggle_either(name, resource, True, local)


@config.command("disable")
@click.argument("name")
@_RESOURCE
@_LOCAL
def config_disable(name: str, resource: str | None, local: bool) -> None:
    """Disable plugin NAME (e.g. builtin:llama.cpp; it is never imported), or with RESOURCE one
    resource of package NAME (e.g. git:github.com/me/pack skills/review).
    """
    _toggle_either(name, resource, False, local)


@subcommands.group()
def sandbox() -> None:
    """Check the sandbox the tools run in (builtin:gondolin)."""


@sandbox.command("doctor")
@click.option(
    "--sandbox",
    "backend",
    metavar="NAME",
    help="The backend to check: local, bwrap, container or gondolin (default: settings "
    "sandbox.backend).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def sandbox_doctor(backend: str | None, as_json: bool) -> int:
    """Probe the sandbox's boundary through the path the tools use.

    Tries to write outside the workspace, read ~/.ssh and the agent directory, reach the
    network, see the host's processes and read a provider key from the environment, and
    prints what each attempt did. Exits 1 when something the settings say is blocked was
    reached (a session with those settings refuses to start), 2 when the sandbox cannot start.
    """
    import asyncio

    host = _load_host(False, ())
    record = next((item for item in host.records if item.name == "builtin:gondolin"), None)
    if record is None or record.status.value != "loaded":
        raise UsageError(
            "the sandbox plugin builtin:gondolin is not loaded "
            "(enable it with 'knightcode config enable builtin:gondolin')"
        )
    assert host.options is not None and host.context is not None
    # The plugin is loaded, so its module imports; it is the one that knows the backends.
    from knightcode_builtins.gondolin.doctor import doctor

    return asyncio.run(
        doctor(
            host.context.settings.get("sandbox"),
            backend,
            host.options.cwd,
            host.options.agent_dir,
            as_json=as_json,
        )
    )


@subcommands.group()
def tools() -> None:
    """List the tools and switch them on or off; the web tools' key and tools.json."""


def _plugin_loaded(host: PluginHost, name: str) -> bool:
    record = host.record(name)
    return record is not None and record.status.value == "loaded"


def _web_tools_loaded(host: PluginHost) -> bool:
    return _plugin_loaded(host, "builtin:web-tools")


def _require_web_tools(host: PluginHost) -> None:
    if not _web_tools_loaded(host):
        raise UsageError(
            "the web tools plugin builtin:web-tools is not loaded "
            "(enable it with 'knightcode config enable builtin:web-tools')"
        )


def _tool_rows(host: PluginHost) -> list[dict[str, object]]:
    """Every tool a session started here could offer: name, origin ('core' or the plugin) and
    whether it starts on — the same choice a session makes (settings ``defaultTools``, the plugin
    tools, then ``tools.enabled``). The web tools are listed, off, while their plugin is off.
    """
    from knightcode._cli.main_command import RunRequest
    from knightcode._modes.setup import active_tool_names, available_tools

    assert host.context is not None
    every, origins = available_tools(host)
    request = RunRequest(mode="json", messages=[])
    active = set(active_tool_names(request, every, origins, host.context.settings))
    rows: list[dict[str, object]] = [
        {"name": name, "origin": origins.get(name, "core"), "enabled": name in active}
        for name in every
    ]
    if not _web_tools_loaded(host):
        rows += [
            {"name": name, "origin": "builtin:web-tools", "enabled": False}
            for name in ("web_search", "web_fetch", "code")
            if name not in every
        ]
    return rows


@tools.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def tools_list(as_json: bool) -> None:
    """Every tool: its name, the plugin it comes from ('core' for the built-in ones) and
    whether a session started here offers it to the model (settings defaultTools and
    tools.enabled; --tools chooses otherwise for one run).
    """
    rows = _tool_rows(_load_host(False, ()))
    if as_json:
        json.dump(rows, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return
    width = max(len(str(row["name"])) for row in rows)
    origin_width = max(len(str(row["origin"])) for row in rows)
    for row in rows:
        state = "on" if row["enabled"] else "off"
        click.echo(f"{row['name']!s:<{width}}  {row['origin']!s:<{origin_width}}  {state}")


def _switch_tool(name: str, enabled: bool) -> None:
    """Write ``tools.enabled.<name>`` into the user settings (as ``/tools`` does)."""
    from knightcode._config.edit_settings import set_setting
    from knightcode._config.loading import SETTINGS_FILENAME
    from knightcode._config.paths import agent_dir

    host = _load_host(False, ())
    rows = {str(row["name"]): row for row in _tool_rows(host)}
    if name not in rows:
        raise UsageError(f"unknown tool {name!r}; known: {', '.join(rows)}")
    settings_path = agent_dir() / SETTINGS_FILENAME
    set_setting(settings_path, f"tools.enabled.{name}", enabled)
    click.echo(
        f"{name}: {'on' if enabled else 'off'} in new sessions (tools.enabled in {settings_path})"
    )
    origin = str(rows[name]["origin"])
    if enabled and origin != "core" and not _plugin_loaded(host, origin):
        click.echo(f"  its plugin {origin} is not loaded: 'knightcode config enable {origin}'")


@tools.command("enable")
@click.argument("name")
def tools_enable(name: str) -> None:
    """Offer tool NAME to the model in new sessions (user settings tools.enabled)."""
    _switch_tool(name, True)


@tools.command("disable")
@click.argument("name")
def tools_disable(name: str) -> None:
    """Stop offering tool NAME to the model in new sessions (user settings tools.enabled)."""
    _switch_tool(name, False)


@tools.command("set-key")
@click.argument("service", type=click.Choice(["brave"]))
@click.option("--clear", is_flag=True, help="Remove the stored key.")
def tools_set_key(service: str, clear: bool) -> None:
    """Store the Brave Search API key in <agent-dir>/tools.json (mode 0600).

    The key is read from standard input when it is not a terminal (``pass brave | knightcode
    tools set-key brave``), else asked for without echo. It is never printed.
    """
    host = _load_host(False, ())
    _require_web_tools(host)
    assert host.options is not None
    from knightcode_builtins.web_tools.config import set_brave_key

    key: str | None = None
    if not clear:
        if sys.stdin.isatty():
            key = click.prompt("Brave Search API key", hide_input=True, err=True)
        else:
            key = sys.stdin.readline().strip()
        if not key:
            raise UsageError("no key given (pipe it on standard input, or type it at the prompt)")
    path = set_brave_key(host.options.agent_dir, key)
    click.echo(f"{'removed the' if clear else 'stored the'} {service} key in {path} (mode 0600)")


@tools.command("show")
def tools_show() -> None:
    """Print tools.json's effective settings as JSON; the key only as 'set' or 'not set'."""
    host = _load_host(False, ())
    _require_web_tools(host)
    assert host.options is not None
    from knightcode_builtins.web_tools.config import describe_config, load_tools_config

    described = describe_config(load_tools_config(host.options.agent_dir))
    json.dump(described, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


@tools.command("set")
@click.argument("key", metavar="SECTION.KEY")
@click.argument("value")
def tools_set(key: str, value: str) -> None:
    """Set one tools.json setting, checked like the file (e.g. scratchpad.inlineChars 20000).

    VALUE is JSON (20000, 0.5, true, '["a.example"]'); a setting that takes text takes it as
    typed; null removes the setting, back to its default. The Brave key has 'set-key'.
    """
    host = _load_host(False, ())
    _require_web_tools(host)
    assert host.options is not None
    from knightcode_builtins.web_tools.edit import format_value, parse_value, set_value

    parsed = parse_value(key, value)
    path = set_value(host.options.agent_dir, key, parsed)
    shown = "the default" if parsed is None else format_value(parsed)
    click.echo(f"{key} = {shown} (in {path})")


@subcommands.command("trust")
@click.option("--revoke", is_flag=True, help="Stop trusting this project.")
def trust(revoke: bool) -> None:
    """Trust this project's .knightcode/ settings, extensions and prompts.

    Trust covers the files as they are now: when any of them changes, knightcode ignores them
    again until you run 'knightcode trust' once more.
    """
    from knightcode._config.paths import agent_dir, project_config_dir
    from knightcode._config.trust import TrustStore, fingerprint

    cwd = Path.cwd()
    store = TrustStore(agent_dir())
    if revoke:
        if store.revoke(cwd):
            click.echo(f"no longer trusting {cwd}")
        else:
            click.echo(f"{cwd} was not trusted")
        return
    files = sorted(fingerprint(project_config_dir(cwd)))
    store.trust(cwd)
    if files:
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        click.echo(f"trusted {cwd} ({len(files)} file(s): {shown})")
    else:
        click.echo(f"trusted {cwd} (it has no .knightcode settings, extensions or prompts yet)")


@subcommands.group()
def mcp() -> None:
    """MCP servers (builtin:mcp): their status, tools and errors."""


@mcp.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option(
    "--sandbox",
    "sandbox_name",
    metavar="NAME",
    help="Run stdio servers in this sandbox, as a session would (default: settings "
    "sandbox.backend).",
)
def mcp_list(as_json: bool, sandbox_name: str | None) -> None:
    """Start each enabled server of mcp.json (the project's when it is trusted), show its status,
    tools and errors, and remember its tools for the next session. Stdio servers run where a
    session's would: in the sandbox when one is set.
    """
    import asyncio

    from knightcode._config.loading import Settings
    from knightcode._config.paths import agent_dir
    from knightcode._config.trust import resolve_trust

    cwd = Path.cwd()
    trust = resolve_trust(agent_dir(), cwd, approve=False)
    if trust.notice:
        print(f"knightcode: {trust.notice}", file=sys.stderr)
    settings = Settings.load(agent_dir(), cwd, project_trusted=trust.trusted)
    failed = asyncio.run(
        _mcp_list(settings.get("sandbox"), sandbox_name, cwd, trust.trusted, as_json)
    )
    if failed:
        sys.exit(failed)


async def _mcp_list(
    sandbox_settings: object, sandbox_name: str | None, cwd: Path, trusted: bool, as_json: bool
) -> int:
    """``mcp list`` inside the sandbox (started, then stopped) when one is set; the exit code."""
    import asyncio

    from knightcode._config.paths import agent_dir
    from knightcode_builtins.gondolin.setup import build_backend, config_for
    from knightcode_builtins.mcp.runtime import probe, status_lines, status_rows

    try:
        config = config_for(sandbox_settings, sandbox_name)
    except ValueError as error:
        print(f"knightcode: error: {error}", file=sys.stderr)
        return 1
    backend = build_backend(config, cwd, agent_dir()) if config.isolated else None
    try:
        if backend is not None:
            try:
                await backend.prepare()
            except Exception as error:  # a sandbox that cannot start: never the host instead
                print(f"knightcode: error: the sandbox cannot start: {error}", file=sys.stderr)
                return 2
        runtime = await asyncio.to_thread(probe, agent_dir(), cwd, trusted, backend)
        try:
            for problem in runtime.config_errors:
                print(f"knightcode: error: {problem}", file=sys.stderr)
            if as_json:
                json.dump(status_rows(runtime), sys.stdout, ensure_ascii=False, indent=2)
                sys.stdout.write("\n")
            else:
                for line in status_lines(runtime, with_errors=False):
                    click.echo(line)
        finally:
            await asyncio.to_thread(runtime.manager.close)
        return 1 if runtime.config_errors else 0
    finally:
        if backend is not None:
            await backend.aclose()


def _http_server(name: str) -> tuple[Path, ServerConfig]:
    """The agent dir and the HTTP server ``name`` of mcp.json (the project's when trusted);
    a missing or non-HTTP server exits 1 with one line.
    """
    from knightcode._config.paths import agent_dir
    from knightcode._config.trust import resolve_trust
    from knightcode_builtins.mcp.config import load_servers

    cwd = Path.cwd()
    trusted = resolve_trust(agent_dir(), cwd, approve=False).trusted
    servers, errors = load_servers(agent_dir(), cwd if trusted else None)
    for error in errors:
        print(f"knightcode: error: {error}", file=sys.stderr)
    found = [s for s in servers if s.name == name]
    if not found:
        print(f"knightcode: error: no MCP server named '{name}' in mcp.json", file=sys.stderr)
        sys.exit(1)
    if found[0].url is None:
        print(
            f"knightcode: error: '{name}' is a stdio server; only HTTP servers log in",
            file=sys.stderr,
        )
        sys.exit(1)
    return agent_dir(), found[0]


@mcp.command("login")
@click.argument("name")
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open a browser.")
@click.option(
    "--timeout", type=float, default=300.0, show_default=True, help="Seconds to wait for you."
)
def mcp_login(name: str, no_browser: bool, timeout: float) -> None:
    """Authorize knightcode for the HTTP server NAME (OAuth): open the printed URL, allow
    access, and the tokens are kept in <agent-dir>/mcp/oauth/ (readable by you only).
    """
    import asyncio

    from knightcode_builtins.mcp.oauth import describe_failure, login

    directory, server = _http_server(name)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        tools = asyncio.run(
            login(directory, server, say=say, open_browser=not no_browser, timeout=timeout)
        )
    except Exception as error:  # the flow's errors (discovery, registration, token, timeout)
        print(
            f"knightcode: error: login to '{name}' failed: {describe_failure(error)}",
            file=sys.stderr,
        )
        sys.exit(1)
    click.echo(f"logged in to '{name}' ({len(tools)} tools)")


@mcp.command("logout")
@click.argument("name")
def mcp_logout(name: str) -> None:
    """Forget the OAuth tokens and client registration kept for the server NAME."""
    from knightcode._config.paths import agent_dir
    from knightcode_builtins.mcp.oauth import logout

    if logout(agent_dir(), name):
        click.echo(f"logged out of '{name}'")
    else:
        click.echo(f"'{name}' had no login")


def _add_package_commands() -> None:
    from knightcode._cli.doctor import doctor
    from knightcode._cli.keys import keys
    from knightcode._cli.login import login, logout
    from knightcode._cli.packages import install, list_packages, remove, update

    for command in (install, remove, update, list_packages, keys, doctor, login, logout):
        subcommands.add_command(command)


_add_package_commands()
