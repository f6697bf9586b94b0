"""``/reload``: plugins, settings, keybindings, context files, skills, prompt templates and the
system prompt, read again; then ``session_start(reason="reload")`` lets plugins catch up (MCP
servers from mcp.json). The file watcher (:mod:`knightcode._modes.interactive.watcher`) runs the
same reload when those files change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp

__all__ = ["reload_everything"]


async def reload_everything(app: KnightcodeApp) -> None:
    """``/reload``: plugins, settings, keybindings, context files, skills, prompt templates and
    the system prompt.
    """
    from knightcode._modes.setup import (
        active_tool_names,
        available_tools,
        load_resources,
        prompt_builder,
        system_prompt,
        with_agent_cwd,
    )
    from knightcode._plugins.reload import reload_extensions

    if app.agent.is_streaming:
        app.transcript.notice("Wait for the agent to finish (or interrupt it) first", "warning")
        return
    report = reload_extensions(app.host) if app.host.options is not None else None
    app.registry.reload()
    app.registry.set_shortcuts(
        (item.owner, item.definition) for item in app.host.registrations.shortcuts
    )
    app.reload_editor_keys()
    warnings: list[str] = list(app.host.warnings)
    if app.request is not None and app.plan is not None:
        every, origins = available_tools(app.host)
        names = active_tool_names(app.request, every, origins, app.settings)
        tools = {name: every[name] for name in names}
        backend = app.agent.options.backend
        trusted = app.plan.trust.trusted
        resources = await load_resources(
            app.request, app.host, app.settings, trusted=trusted, reload=True
        )
        warnings += resources.warnings
        app.agent.resources = resources
        from knightcode._modes.interactive.themes import reload_themes

        warnings += reload_themes(app, resources)
        prompt = with_agent_cwd(
            system_prompt(
                app.request, app.agent.cwd, app.agent_dir, trusted, tools, warnings, resources
            ),
            backend,
            app.agent.cwd,
        )
        agent = app.agent
        build = prompt_builder(
            app.request, agent.cwd, app.agent_dir, trusted, backend, lambda: agent.resources
        )
        app.agent.reconfigure(every, origins, names, build, prompt)
    # Plugins bring their own state in step (builtin:mcp re-reads mcp.json here).
    await app.host.hooks.session_start(reason="reload", previous_session_file=None)
    # ``/`` completion offers the templates and skills found now (the editor's list was set
    # above, with the plugins' commands, before the resources were read again).
    app.editor.set_commands(app.command_infos())
    lines = ["Reloaded plugins, settings, keybindings, context files, skills and prompt templates"]
    if report is not None:
        for label, names in (
            ("loaded", report.loaded),
            ("reloaded", report.reloaded),
            ("unloaded", report.unloaded),
            ("failed", report.failed),
        ):
            if names:
                lines.append(f"  {label}: {', '.join(names)}")
    for warning in [*warnings, *app.registry.warnings]:
        lines.append(f"  warning: {warning}")
    for conflict in app.registry.conflicts:
        lines.append(f"  key conflict: {conflict}")
    app.transcript.notice("\n".join(lines))
    app.refresh_footer()
