"""Interactive mode: the terminal UI (Textual), imported only when it starts."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from knightcode._errors import UsageError

if TYPE_CHECKING:
    from knightcode._cli.main_command import RunRequest
    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.planning import LoadPlan
    from knightcode._session.notices import SessionNotice

__all__ = ["run_interactive"]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _check_terminal() -> None:
    # Textual draws on stderr and reads stdin: both must be the terminal.
    for name, stream in (("stdin", sys.stdin), ("stderr", sys.stderr)):
        if stream is None or not stream.isatty():
            raise UsageError(
                f"interactive mode needs a terminal ({name} is not one); "
                "use -p 'message' or --mode json|rpc in scripts"
            )


async def run_interactive(request: RunRequest, host: PluginHost, plan: LoadPlan) -> int:
    """Run the terminal UI until the user quits; returns the exit status."""
    _check_terminal()
    # The terminal's size is asked of the terminal: an exported COLUMNS/LINES is a stale
    # snapshot that would make Textual and rich draw for the wrong width.
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)
    # Textual draws a changed screen at most this often: its default, 60, can hold a typed
    # character back up to 16 ms, and while an answer streams that was most of the echo time
    # (bench/interactive_tui.py: p99 22 ms at 120, 14 ms at 240). Only changed screens are
    # drawn, so an idle UI costs nothing more. Read when Textual is first imported, just below.
    os.environ.setdefault("TEXTUAL_FPS", "240")
    from knightcode._config.context_files import discover_context_files
    from knightcode._keys.registry import KeyRegistry
    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._modes.interactive.header import build_header
    from knightcode._modes.interactive.ui import InteractiveUI
    from knightcode._modes.setup import build_agent, report_session_notices

    assert host.options is not None
    resume_at_start = request.resume
    if resume_at_start:
        # The picker runs inside the UI; until something is picked the session is a new one,
        # which writes nothing before its first answer.
        request = replace(request, resume=False)
    from knightcode._modes.attachments import split_arguments

    # Checked before the UI opens: a missing @file is a usage error (exit 2), not a notice.
    initial = (
        split_arguments(
            list(request.messages),
            host.options.cwd,
            auto_resize=plan.settings.model.images.auto_resize,
        )
        if request.messages
        else None
    )
    agent = await build_agent(request, host, plan, allow_no_model=True)
    report_session_notices(agent, None)
    registry = KeyRegistry(host.options.agent_dir)
    registry.add_shortcuts((item.owner, item.definition) for item in host.registrations.shortcuts)
    files = (
        []
        if request.no_context_files
        else [f.path for f in discover_context_files(host.options.agent_dir, host.options.cwd)]
    )
    from knightcode._modes.interactive.themes import start_themes

    themes, theme_warnings = start_themes(
        request, plan, host.options.agent_dir, host.options.cwd, agent.resources
    )
    header = build_header(agent, host, registry, files, list(host.warnings))
    host.warnings.clear()
    fullscreen = request.fullscreen or plan.settings.model.fullscreen
    app = KnightcodeApp(
        agent,
        host,
        registry,
        None if plan.settings.model.quiet_startup and not request.verbose else header,
        plan=plan,
        request=request,
        resume_at_start=resume_at_start,
        initial=initial,
        fullscreen=fullscreen,
        themes=themes,
    )
    for warning in theme_warnings:  # shown after the header (also with quietStartup)
        app.plugin_notice(warning, "warning")

    def deliver(notice: SessionNotice) -> None:
        # In the transcript while the UI runs (stderr is the UI's canvas then), else on stderr.
        if app.is_running:
            app.transcript.notice(notice.message, "warning")
        else:
            print(notice.line, file=sys.stderr, flush=True)

    def shutdown() -> None:
        app.request_shutdown()  # the app running now (a mode switch replaces it)

    def bind(current: KnightcodeApp) -> None:
        if host.context is not None:
            host.context.bind_ui(InteractiveUI(current), has_ui=True, shutdown=shutdown)

    bind(app)  # before session_start: a plugin's notice there shows after the header
    agent.session.set_notice_listener(deliver)
    loop = asyncio.get_running_loop()
    for number in STOP_SIGNALS:
        # SIGTERM and SIGHUP (the terminal closed) end like /quit: the run is aborted, the
        # session synced, the terminal given back.
        loop.add_signal_handler(number, shutdown)
    try:
        await host.hooks.session_start(reason="startup", previous_session_file=None)
        while True:
            status = await _run_app(app, plan.settings.model.auto_reload)
            if not app.switching or app.return_code:
                break
            # /fullscreen: the same session in a new app of the other mode (see .fullscreen).
            app = KnightcodeApp(
                agent,
                host,
                registry,
                app.header,
                plan=plan,
                request=request,
                fullscreen=not app.fullscreen,
                carry=app.carry(),
                themes=app.theme_state,  # the theme chosen (or previewed) so far
            )
            bind(app)
    finally:
        for number in STOP_SIGNALS:
            loop.remove_signal_handler(number)
        await host.hooks.session_shutdown(reason="quit", target_session_file=None)
        if host.context is not None:
            await host.context.aclose()
        agent.session.close()
        await agent.model_registry.aclose()
    if app.return_code:
        return app.return_code  # the UI itself failed; Textual printed why
    return status if isinstance(status, int) else app.exit_status


async def _run_app(app: KnightcodeApp, auto_reload: bool) -> int | None:
    """Run ``app`` until it exits (inline, or fullscreen with the mouse), watching meanwhile the
    theme file in use and the files ``autoReload`` watches (the watchers belong to one app: a
    mode switch starts them again for the next).
    """
    from knightcode._modes.interactive.themes import watch_theme_file

    stop_watching = asyncio.Event()
    watchers = [asyncio.create_task(watch_theme_file(app, stop_watching))]
    if auto_reload:
        from knightcode._modes.interactive.watcher import watch_and_reload

        watchers.append(asyncio.create_task(watch_and_reload(app, stop_watching)))
    try:
        return await app.run_async(inline=not app.fullscreen, mouse=app.fullscreen)
    finally:
        stop_watching.set()
        for watcher in watchers:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
