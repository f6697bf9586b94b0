"""The interactive application: an inline Textual app around one :class:`AgentSession`.

Layout, top to bottom, all inside the inline region at the bottom of the terminal (finished
transcript items are written above it, into the scrollback — see :mod:`.scrollback`):

* ``#live``    the assistant message being streamed and its running tools (last screenful)
* ``#status``  working spinner, retry countdown, compaction progress
* ``#widgets`` plugin widgets and status lines, queued steering/follow-up messages
* ``#input``   the editor — or a selector/dialog mounted in its place
* ``#footer``  cwd and session name; tokens, cost, context use, model and thinking level

Every key goes through the keybinding registry: the editor handles the ``tui.*`` actions it owns
and lets the rest bubble here, where ``app.*`` actions are looked up in the ``main`` context.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.geometry import Offset
from textual.screen import Screen
from textual.widgets import Static

from knightcode._modes.interactive.lines import Lines
from knightcode._modes.interactive.renderers import AppRenderers
from knightcode._modes.interactive.scrollback import Scrollback
from knightcode._modes.interactive.status import StatusArea
from knightcode._modes.interactive.terminal import KeyboardModes
from knightcode._modes.interactive.themes import default_themes
from knightcode._modes.interactive.transcript import Item, Transcript

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence
    from pathlib import Path

    from rich.console import RenderableType
    from textual.notifications import SeverityLevel
    from textual.timer import Timer

    from knightcode._abort import AbortSignal
    from knightcode._agent.session import AgentSession
    from knightcode._cli.main_command import RunRequest
    from knightcode._config.loading import Settings
    from knightcode._config.settings import SettingsModel
    from knightcode._keys.registry import KeyRegistry, PluginShortcut
    from knightcode._modes.attachments import Prompts
    from knightcode._modes.interactive.completion import CommandInfo
    from knightcode._modes.interactive.editor import PromptEditor
    from knightcode._modes.interactive.footer import Totals
    from knightcode._modes.interactive.fullscreen import Carry
    from knightcode._modes.interactive.fullscreen.control import FullscreenControl
    from knightcode._modes.interactive.fullscreen.pane import TranscriptPane
    from knightcode._modes.interactive.render import RenderOptions
    from knightcode._modes.interactive.themes import AppThemes
    from knightcode._modes.interactive.transcript import NoticeLevel
    from knightcode._plugins.context import NotifyLevel
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.planning import LoadPlan
    from knightcode._plugins.results import CompactionVerdict
    from knightcode._types.events import SessionEvent
    from knightcode._types.messages import ImageContent

__all__ = ["KnightcodeApp"]

LIVE_FPS = 30
RESIZE_SETTLE_SECONDS = 0.15
WARM_UP_AFTER_SECONDS = 0.05
NO_MODEL_HELP = (
    "No model is available yet. /login adds an API key, /model picks a model, "
    "/llama loads a local one (llama.cpp)."
)


class MainScreen(Screen[None], inherit_bindings=False):
    """The one screen, without Textual's tab/shift+tab focus and ctrl+c copy bindings: those
    keys are ``tui.input.tab``, ``app.thinking.cycle`` and ``app.clear`` here.
    """


class KnightcodeApp(App[int], inherit_bindings=False):
    """The terminal UI. ``run_async(inline=True, mouse=False)``: the normal screen, and no
    mouse reporting, so the terminal's own selection keeps working on the transcript.
    """

    INLINE_PADDING = 0
    ENABLE_COMMAND_PALETTE = False
    CSS: ClassVar[str] = """
    Screen { height: auto; background: transparent; }
    Screen:inline { border: none; height: auto; }
    .-empty { display: none; }
    Screen.-fullscreen { height: 100%; }
    #search { height: auto; }
    #status { color: $text-muted; }
    #widgets { height: auto; }
    #input { height: auto; }
    #footer { height: auto; color: $text-muted; }
    """

    def __init__(
        self,
        agent: AgentSession,
        host: PluginHost,
        registry: KeyRegistry,
        header: RenderableType | None = None,
        *,
        plan: LoadPlan | None = None,
        request: RunRequest | None = None,
        resume_at_start: bool = False,
        initial: Prompts | None = None,
        themes: AppThemes | None = None,
        fullscreen: bool = False,
        carry: Carry | None = None,
    ) -> None:
        self.theme_state = themes or default_themes()  # before Textual asks for CSS variables
        super().__init__()
        self.fullscreen = fullscreen
        self._carry = carry
        self.switching = False
        """Set by :meth:`toggle_fullscreen`: the app exits to be started again in the other
        mode (see :mod:`.fullscreen`)."""
        self.agent = agent
        self.host = host
        self.registry = registry
        self.plan = plan
        self.request = request
        self._resume_at_start = resume_at_start
        self._initial = initial
        self.scrollback = Scrollback(self)
        self.keyboard = KeyboardModes()
        self.transcript = Transcript(
            self._write_item, self._write_text, self._live_dirty, AppRenderers(self)
        )
        self.inline_mark: int | None = None
        """How many transcript items the normal screen shows (None: none printed yet; -1: it
        shows a conversation that was replaced while fullscreen)."""
        if carry is not None:
            self.transcript.items = carry.items
            self.transcript.options = carry.options
            self.inline_mark = carry.inline_mark
        self._header = header
        # Plugin notices from before the UI is up (``session_start``): shown after the header.
        self._early_notices: list[tuple[str, NotifyLevel]] | None = []
        self._dirty = False
        self.status = StatusArea(self._show, registry, self.render_options)
        if carry is not None:
            self.status.take_plugin_state(carry.status)
        self._clear_pressed_at = 0.0
        self._unsubscribe: Callable[[], None] | None = None
        self._run_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.shell_signal: AbortSignal | None = None
        self._escape_pressed_at = 0.0
        self._printed_width = 0
        self._totals: Totals | None = None
        self._summing = False
        self._totals_stale = False
        self._images: list[ImageContent] = []
        self._reprint_timer: Timer | None = None
        self.exit_status = 0
        self._fullscreen_control: FullscreenControl | None = None
        self.selected_text = ""
        self._leaving_text = ""
        """The fullscreen transcript's last mouse selection (``app.message.copy`` copies it)."""
        from knightcode._modes.interactive.dialog_host import DialogHost

        self.dialogs = DialogHost(self)

    # --- layout -----------------------------------------------------------------------------

    # The terminal's own cursor stays at the top-left corner of the inline region (it is hidden;
    # the editor draws its cursor). Textual would move it to the editor's cursor after every
    # frame, by a relative move the terminal clamps at its bottom row; the next frame (and every
    # write into the scrollback) then starts from a row it did not expect and overwrites the
    # last lines of the transcript. Pinned, the region's corner is always where the cursor is.
    @property
    def cursor_position(self) -> Offset:
        return Offset(0, 0)

    @cursor_position.setter
    def cursor_position(self, position: Offset) -> None:
        pass  # see above: widgets may set it, the corner stays where it is

    def get_css_variables(self) -> dict[str, str]:
        """Textual's variables, with the colours the theme gives (see ``css_variables``)."""
        from knightcode._modes.interactive.themes import css_variables

        return {**super().get_css_variables(), **css_variables(self.theme_state.current)}

    def get_default_screen(self) -> Screen[None]:
        return MainScreen()

    def compose(self) -> ComposeResult:
        from knightcode._modes.interactive.completion import CompletionMenu

        if self.fullscreen:
            from knightcode._modes.interactive.fullscreen.pane import TranscriptPane

            yield TranscriptPane(id="transcript")
            yield Static("", id="search", classes="-empty")
        yield Lines(id="live")
        yield Lines(id="status")
        yield Static("", id="widgets", classes="-empty")
        with Vertical(id="input"):
            yield self._make_editor()
        yield CompletionMenu(id="menu", rows=self.settings_model().autocomplete_max_visible)
        yield Static("", id="footer")

    def _make_editor(self) -> PromptEditor:
        from knightcode._modes.interactive.editor import PromptEditor
        from knightcode._modes.interactive.file_index import FileIndex

        return PromptEditor(
            self.registry,
            history=self._history(),
            commands=self.command_infos(),
            cwd=self.agent.cwd,
            file_index=FileIndex(self.agent.cwd),
            id="editor",
        )

    @property
    def editor(self) -> PromptEditor:
        from knightcode._modes.interactive.editor import PromptEditor

        return self.query_one("#editor", PromptEditor)

    def _history(self) -> list[str]:
        """Earlier prompts of this session, oldest first (the editor's history)."""
        from knightcode._session.messages import content_text

        return [
            text
            for message in self.agent.messages
            if message["role"] == "user" and (text := content_text(message["content"]).strip())
        ]

    def command_infos(self) -> list[CommandInfo]:
        """What ``/`` completes: the built-in commands, the plugins', then prompt templates
        (with their argument hint) and ``skill:`` commands.
        """
        from knightcode._modes.interactive.commands import BUILTIN_COMMANDS
        from knightcode._modes.interactive.completion import CommandInfo

        infos = [CommandInfo(c.name, c.description, "builtin") for c in BUILTIN_COMMANDS.values()]
        taken = set(BUILTIN_COMMANDS)
        for item in self.host.registrations.commands:
            if item.definition.name not in taken:
                taken.add(item.definition.name)
                infos.append(
                    CommandInfo(item.definition.name, item.definition.description, item.owner)
                )
        resources = self.agent.resources
        if resources is not None:
            for template in resources.templates:
                if template.name not in taken:
                    hint = f" — {template.argument_hint}" if template.argument_hint else ""
                    infos.append(CommandInfo(template.name, template.description + hint, "prompt"))
            infos += [
                CommandInfo(f"skill:{skill.name}", skill.description, "skill")
                for skill in (resources.skills if resources.skill_commands else ())
            ]
        return infos

    def plugin_notice(self, message: str, level: NotifyLevel) -> None:
        """A plugin's ``ctx.ui.notify``: in the transcript, after the header."""
        if self._early_notices is not None:
            self._early_notices.append((message, level))
        else:
            self.transcript.notice(message, level)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Textual's toasts do not fit an inline UI: notices go to the transcript."""
        level: NoticeLevel = (
            "warning" if severity == "warning" else "error" if severity == "error" else "info"
        )
        self.transcript.notice(f"{title}: {message}" if title else message, level)

    async def on_mount(self) -> None:
        from knightcode._keys.textual_keys import install_modify_other_keys_fix

        install_modify_other_keys_fix()
        self.status.draw_widgets()  # plugin status set before the app ran (session_start)
        self.keyboard.enable()
        self.app_suspend_signal.subscribe(self, lambda _app: self.keyboard.disable())
        self.app_resume_signal.subscribe(self, lambda _app: self.keyboard.enable())
        if self._carry is None:
            self.transcript.options.show_thinking = not self.settings_model().hide_thinking_block
        if self.fullscreen:
            from knightcode._modes.interactive.fullscreen import start_fullscreen

            start_fullscreen(self, self._header)
        elif self._carry is not None and self.inline_mark is not None and self.inline_mark >= 0:
            from knightcode._modes.interactive.fullscreen import print_since

            print_since(self, self.inline_mark)  # what was added while fullscreen
        else:
            if self._carry is not None:
                self.transcript.items = []
                if self.inline_mark is not None:  # another conversation is shown: replaced
                    self.scrollback.write("", reprint=True)
            if self._header is not None:
                self.transcript.add_renderable(self._header)
            self.transcript.load(self.agent.messages, self.size.height or 50)
        early, self._early_notices = self._early_notices or [], None
        for message, level in early:
            self.transcript.notice(message, level)
        if not self.fullscreen:
            self.inline_mark = len(self.transcript.items)
        self._unsubscribe = self.agent.subscribe(self._on_event)
        self.set_interval(1 / LIVE_FPS, self._tick)
        # The markdown stack loads just after the first frame, not before it.
        self.set_timer(WARM_UP_AFTER_SECONDS, self._warm_up)
        self._update_footer()
        self._printed_width = self.terminal_width()  # what the header is printed at
        # editorPaddingX: extra columns beside the editor's text (one is always there).
        self.editor.styles.padding = (0, 1 + self.settings_model().editor_padding_x)
        self.query_one("#editor").focus()
        if self._carry is not None:
            self.set_editor_text(self._carry.editor_text)
        if self._resume_at_start:
            self.spawn(self._resume_or_quit())
        elif self._initial is not None and self._initial.messages:
            self.spawn(self._submit_initial(self._initial))

    async def _resume_or_quit(self) -> None:
        from knightcode._modes.interactive.sessions import resume

        if not await resume(self, at_start=True):
            await self.shutdown()

    async def _submit_initial(self, prompts: Prompts) -> None:
        """``knightcode "message" @file``: the UI starts and submits those prompts in turn."""
        for index, text in enumerate(prompts.messages):
            if self.model_missing:
                self.set_editor_text(text)
                self.transcript.notice(NO_MODEL_HELP, "warning")
                return
            self._start_run(text, prompts.images if index == 0 else None)
            if self._run_task is not None:
                await self._run_task

    async def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.keyboard.disable()

    # --- transcript -------------------------------------------------------------------------

    def _warm_up(self) -> None:
        import gc

        from knightcode._modes.interactive.renderers import warm_up

        warm_up()
        # Everything built so far lives as long as the UI: out of the collector's way, so a
        # full collection while an answer streams does not stall a keystroke's echo.
        gc.collect()
        gc.freeze()
        # The window title says where knightcode runs; it is set last, once the UI is ready
        # for keys (the end-to-end tests wait for it).
        self.set_terminal_title(f"knightcode · {self.agent.cwd.name or self.agent.cwd}")

    @staticmethod
    def terminal_width() -> int:
        """The terminal's width now, asked of the terminal (Textual learns it a moment after
        start-up, and the header is printed before that).
        """
        import os
        import sys

        try:
            return os.get_terminal_size(sys.__stderr__.fileno() if sys.__stderr__ else 2).columns
        except (OSError, ValueError):
            return 80

    def render_options(self) -> RenderOptions:
        """How the transcript is drawn now: the terminal width, the toggles, the user's keys."""
        from knightcode._modes.interactive.render.options import RenderOptions

        view = self.transcript.options
        keys = self.registry.keys_for("app.tools.expand")
        return RenderOptions(
            width=self.terminal_width(),
            theme=self.theme_state.current,
            expand_tools=view.expand_tools,
            show_thinking=view.show_thinking,
            cwd=self.agent.cwd,
            expand_hint=keys[0] if keys else "app.tools.expand",
        )

    def _write_item(self, renderable: RenderableType | None) -> None:
        if self.fullscreen:
            if renderable is not None:
                adding = self.transcript.adding
                message = adding.message if adding is not None else None
                prompt = message is not None and message["role"] == "user"
                self.fullscreen_pane().append(lambda: renderable, prompt=prompt)
        elif renderable is not None:
            self._write_text(self.ansi(renderable))

    def write_rendered(self, renderable: RenderableType | None) -> None:
        """Show ``renderable`` as a finished transcript item (scrollback or fullscreen pane)."""
        self._write_item(renderable)

    @property
    def header(self) -> RenderableType | None:
        return self._header

    def _write_text(self, text: str) -> None:
        if self.fullscreen:
            self.fullscreen_pane().append(lambda: Text.from_ansi(text))
            return
        # One blank line after every item, as between paragraphs.
        self.scrollback.write(text + "\n")

    def ansi(self, renderable: RenderableType) -> str:
        """``renderable`` as terminal text at the current width."""
        return self._to_ansi(renderable)

    def _to_ansi(self, renderable: RenderableType) -> str:
        from knightcode._modes.interactive.render.ansi import to_ansi

        return to_ansi(renderable, self.render_options().width).rstrip("\n")

    def on_resize(self, event: events.Resize) -> None:
        # Textual's inline driver clears the screen on a resize; print the transcript again at
        # the new width (once the resizing settled), as the reference re-renders on resize.
        width = event.size.width
        if width == self._printed_width or self.fullscreen:
            return  # (the fullscreen pane renders at its own width)
        self._printed_width = width
        if self._reprint_timer is not None:
            self._reprint_timer.stop()
        self._reprint_timer = self.set_timer(RESIZE_SETTLE_SECONDS, self.reprint)

    def reprint(self) -> None:
        """Print the whole transcript again (the view options or the width changed)."""
        if self.fullscreen:
            from knightcode._modes.interactive.fullscreen import refill

            refill(self)
            return
        rendered = [self._to_ansi(r) + "\n" for r in self.transcript.rendered_items()]
        self.scrollback.write("\n".join(rendered), reprint=True)

    def restyle(self) -> None:
        """Draw everything again in the current theme (a switch, a preview, an edited file)."""
        self.reprint()
        self._dirty = True
        self.refresh_css()
        self._update_footer()

    def _live_dirty(self) -> None:
        self._dirty = True  # the next tick re-renders; a delta costs nothing more

    def _tick(self) -> None:
        self.status.tick()
        if not self._dirty:
            return
        self._dirty = False
        from knightcode._modes.interactive.view import render_live

        options = self.render_options()
        parts = [render_live(turn, options) for turn in self.transcript.turns]
        shown = [part for part in parts if part is not None]
        if not shown:
            self._show("#live", None)
            return
        from rich.console import Group

        self._show("#live", self._last_lines(Group(*shown)))

    def _last_lines(self, renderable: RenderableType) -> Text:
        """The last screenful of ``renderable`` (the rest is still being written)."""
        budget = max(3, self.size.height - 8)
        lines = self._to_ansi(renderable).split("\n")
        text = Text.from_ansi("\n".join(lines[-budget:]), no_wrap=True, overflow="crop")
        text.no_wrap = True
        return text

    # --- agent events -----------------------------------------------------------------------

    def _on_event(self, event: SessionEvent) -> None:
        try:
            self._handle_event(event)
        except Exception as error:  # a bug here must show, not vanish into the agent's loop
            import traceback

            where = traceback.format_exc(limit=-3).strip().splitlines()
            detail = " | ".join(line.strip() for line in where[-4:])
            self.transcript.notice(f"UI error on {event['type']}: {error!r} ({detail})", "error")

    def _handle_event(self, event: SessionEvent) -> None:
        self.transcript.on_event(event)
        if event["type"] in ("message_start", "auto_retry_end", "agent_settled"):
            self.status.retry_over()
        if event["type"] == "agent_start":
            self.set_working("Working…")
        elif event["type"] == "agent_settled":
            self.set_working(None)
            self._update_footer()
        elif event["type"] == "auto_retry_start":
            self.status.retrying(
                event["attempt"], event["maxAttempts"], event["delayMs"], event["errorMessage"]
            )
        elif event["type"] == "auto_retry_end" and not event["success"]:
            self.transcript.notice(f"Retry failed: {event.get('finalError', '')}", "error")
        elif event["type"] == "compaction_start":
            self.set_working("Compacting…")
        elif event["type"] == "compaction_end":
            if event.get("errorMessage"):
                self.transcript.notice(f"Compaction failed: {event['errorMessage']}", "error")
            self.set_working("Working…" if self.agent.is_streaming else None)
        elif event["type"] == "queue_update":
            self.status.set_queued(event["steering"], event["followUp"])
        elif event["type"] == "message_end":
            message = event["message"]
            if message["role"] == "assistant":
                if self._totals is not None:
                    self._totals.add(message.get("usage"))
                else:
                    self._totals_stale = True  # a sum in progress may have missed it
            self._update_footer()
        elif event["type"] in ("thinking_level_changed", "session_info_changed"):
            self._update_footer()

    def _show(self, selector: str, renderable: RenderableType | None) -> None:
        """Show ``renderable`` above the editor; None hides the widget (no blank line).

        ``#live`` and ``#status`` take laid-out text (:class:`Lines`, no layout pass per frame);
        the others any renderable. Before the widgets exist (a plugin's ``session_start`` sets
        its status before the app runs) nothing is drawn; ``on_mount`` draws what was set.
        """
        if not self.is_running or not self.screen_stack:
            return
        if selector in ("#live", "#status"):
            lines = self.query_one(selector, Lines)
            if renderable is None or isinstance(renderable, Text):
                lines.show(renderable)
            else:
                lines.show(self._last_lines(renderable))
            return
        widget = self.query_one(selector, Static)
        widget.set_class(renderable is None, "-empty")
        widget.update("" if renderable is None else renderable)

    def set_working(self, text: str | None) -> None:
        self.status.set_working(text)

    def set_plugin_status(self, key: str, text: str | None) -> None:
        self.status.set_plugin_status(key, text)

    def set_plugin_widget(self, key: str, lines: Sequence[str] | None) -> None:
        self.status.set_plugin_widget(key, lines)

    def set_terminal_title(self, title: str) -> None:
        clean = "".join(ch for ch in title if ch.isprintable())
        self.scrollback.write_control(f"\x1b]0;{clean}\x07")

    # --- settings and session -----------------------------------------------------------------

    @property
    def agent_dir(self) -> Path:
        return self.agent.options.agent_dir

    @property
    def settings(self) -> Settings:
        """The settings in effect (read again by :meth:`reload_settings`)."""
        if self.host.context is not None:
            return self.host.context.settings
        assert self.plan is not None
        return self.plan.settings

    def settings_model(self) -> SettingsModel:
        return self.settings.model

    def reload_settings(self) -> None:
        """Read the settings files again (after ``/settings``, ``/scoped-models``)."""
        if self.host.options is None or self.host.context is None:
            return
        from knightcode._plugins.planning import make_plan

        self.host.context.reload_settings(make_plan(self.host.options).settings)

    def reload_editor_keys(self) -> None:
        self.editor.reload_keys()
        self.editor.set_commands(self.command_infos())

    def session_replaced(self, message: str, *, quiet: bool = False) -> None:
        """The session (or the point in its tree) changed: show its conversation afresh."""
        self._totals = None  # summed again for the session now open
        self.transcript.items.clear()
        self.transcript.turns.clear()
        if self.fullscreen:
            from knightcode._modes.interactive.fullscreen import refill

            if self.inline_mark is not None:
                self.inline_mark = -1  # the normal screen shows another conversation now
            refill(self)
        else:
            self.scrollback.write("", reprint=True)
            if self._header is not None:
                self.transcript.add_renderable(self._header)
            self.transcript.load(self.agent.messages, self.size.height or 50)
            self.inline_mark = len(self.transcript.items)
        if not quiet:
            self.transcript.notice(message)
        self.refresh_footer()

    def after_compaction(self, verdict: CompactionVerdict) -> None:
        """A manual compaction ended: show the conversation as the model now sees it."""
        if verdict.compacted:
            self.session_replaced("Compacted the context")
        elif verdict.aborted:
            self.transcript.notice("Compaction cancelled", "warning")
        elif verdict.error_message is None:  # a failure was shown by its compaction_end event
            self.transcript.notice("Nothing to compact yet", "warning")

    def copy_to_clipboard_osc52(self, text: str) -> None:
        """Put ``text`` on the clipboard: through the terminal (OSC 52, works over SSH and in
        tmux with ``set-clipboard on``) and with the desktop's clipboard program when there is
        one (some terminals ignore OSC 52).
        """
        import base64

        from knightcode._modes.interactive.clipboard import copy_with_program

        payload = base64.b64encode(text.encode()).decode()
        self.scrollback.write_control(f"\x1b]52;c;{payload}\x07")
        program = copy_with_program(text)
        lines = text.count("\n") + 1
        how = f"with {program}" if program else "through the terminal (OSC 52)"
        self.transcript.notice(f"Copied {lines} line{'s' if lines != 1 else ''} {how}")

    async def _sum_totals(self) -> None:
        """Sum the session's tokens and cost beside the UI (a pass over the whole file)."""
        from knightcode._modes.interactive.footer import Totals

        try:
            while True:
                self._totals_stale = False
                totals = await asyncio.to_thread(Totals.of, self.agent)
                if not self._totals_stale:  # no answer ended meanwhile: exact
                    self._totals = totals
                    break
        finally:
            self._summing = False
        self._update_footer()

    def refresh_footer(self) -> None:
        self._update_footer()

    def _update_footer(self) -> None:
        from knightcode._modes.interactive.footer import footer_text

        if self._totals is None and not self._summing:
            self._summing = True
            self.spawn(self._sum_totals())
        self.query_one("#footer", Static).update(footer_text(self.agent, self._totals))
        level = self.agent.thinking_level
        theme = self.theme_state.current
        self.editor.border_level(level, theme.thinking_border(level), theme.bash_mode)

    # --- input ------------------------------------------------------------------------------

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        self.spawn(self.submit(message.text))

    def on_prompt_editor_copy_requested(self, message: PromptEditor.CopyRequested) -> None:
        self.copy_to_clipboard_osc52(message.text)

    def on_prompt_editor_completion_changed(self, message: PromptEditor.CompletionChanged) -> None:
        from knightcode._modes.interactive.completion import CompletionMenu

        self.query_one("#menu", CompletionMenu).show(message.items, message.selected)

    def spawn(self, work: Coroutine[object, object, None]) -> None:
        """Run ``work`` beside the UI (a command may take long: keys must keep flowing); a
        failure becomes an error line in the transcript.
        """

        async def guarded() -> None:
            try:
                await work
            except Exception as error:
                import traceback

                where = traceback.format_exc(limit=-3).strip().splitlines()
                detail = " | ".join(line.strip() for line in where[-4:])
                self.transcript.notice(f"Error: {error} ({detail})", "error")

        task = asyncio.ensure_future(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def submit(self, text: str) -> None:
        """What Enter does with the editor's text."""
        from knightcode._modes.interactive.commands import run_command

        stripped = text.strip()
        if not stripped:
            return
        if stripped.startswith("/") and await run_command(self, stripped):
            if self.model_missing:
                await self.adopt_available_model()
            return
        if stripped.startswith("!") and len(stripped) > 1:
            excluded = stripped.startswith("!!")
            command = stripped[2:] if excluded else stripped[1:]
            if command.strip():
                await self.run_shell(command.strip(), excluded)
                return
        if self.model_missing:
            self.transcript.notice(NO_MODEL_HELP, "warning")
            self.set_editor_text(text)  # nothing is lost: fix the model, press Enter again
            return
        images = self._take_images()
        if self.agent.is_streaming:
            self.agent.steer(self.agent.expand(text), images)
            return
        self._start_run(text, images)

    async def run_shell(self, command: str, excluded: bool) -> None:
        """``!cmd`` (output goes to the model with the next prompt) and ``!!cmd`` (kept out of
        its context): run through the execution backend, output streamed live, recorded like
        the RPC ``bash`` command records it.
        """
        from knightcode._abort import AbortSignal
        from knightcode._agent.session_ops import SessionOperationError
        from knightcode._agent.user_bash import record_bash_execution, run_user_bash

        signal = AbortSignal()
        self.shell_signal = signal
        chunks: list[str] = []

        def on_chunk(text: str) -> None:
            chunks.append(text)
            tail = "".join(chunks)[-4000:].splitlines()[-12:]
            self._show("#live", Text.assemble((f"$ {command}\n", "bold"), "\n".join(tail)))

        self.set_working(f"Running {command}")
        try:
            message = await run_user_bash(
                self.agent, command, exclude_from_context=excluded, signal=signal, on_chunk=on_chunk
            )
        except SessionOperationError as error:  # a user's mistake (shellPath): no traceback
            self.transcript.notice(str(error), "error")
            return
        finally:
            self.shell_signal = None
            self.set_working("Working…" if self.agent.is_streaming else None)
            self._show("#live", None)
            self._dirty = True
        self.transcript.add(Item("message", message=message))
        await record_bash_execution(self.agent, message)

    def attach_image(self, image: ImageContent) -> int:
        """Send ``image`` with the next message (ctrl+v); its number for the editor's marker."""
        self._images.append(image)
        return len(self._images)

    def _take_images(self) -> list[ImageContent] | None:
        images, self._images = self._images, []
        return images or None

    @property
    def model_missing(self) -> bool:
        """No model is usable yet (the UI opened anyway, see ``placeholder_model``)."""
        from knightcode._modes.setup import NO_MODEL_API

        return self.agent.model.api == NO_MODEL_API

    async def adopt_available_model(self) -> None:
        """After a command (``/login``, ``/llama``) a model may have become usable: take it."""
        model = await self.agent.model_registry.default_model()
        if model is not None:
            await self.agent.set_model(model)
            self.transcript.notice(f"Using {model.ref}")
            self._update_footer()

    def follow_up(self, text: str) -> None:
        if not text.strip():
            return
        if self.agent.is_streaming:
            self.agent.follow_up(self.agent.expand(text))
        else:
            self.spawn(self.submit(text))  # idle: the same as Enter (commands, !cmd …)

    def _start_run(self, text: str, images: list[ImageContent] | None = None) -> None:
        async def run() -> None:
            try:
                await self.agent.prompt(text, images, source="interactive")
            except Exception as error:  # a failed run is reported; the UI goes on
                self.transcript.notice(f"Error: {error}", "error")
            finally:
                self.transcript.flush_all()
                self.set_working(None)

        self._run_task = asyncio.ensure_future(run())

    async def on_event(self, event: events.Event) -> None:
        held = self.dialogs.held_keys
        if held is not None and isinstance(event, events.Key) and not event.is_forwarded:
            held.append(event)  # typed while a dialog opens: replayed into it
            return
        if (
            self.fullscreen
            and isinstance(event, events.Key)
            and self.focused is not None
            and self.focused.id == "editor"
            and self.fullscreen_control().key(event)
        ):
            event.stop()
            event.prevent_default()
            return  # a transcript action: it takes precedence over the editor's
        await super().on_event(event)

    async def on_key(self, event: events.Key) -> None:
        from knightcode._keys.textual_keys import key_ids

        for key_id in key_ids(event):
            shortcut = self.registry.shortcut_for(key_id)
            if shortcut is not None:
                event.stop()
                self.spawn(self._run_shortcut(shortcut))
                return
            # A key may serve an editor action and an app action (ctrl+d deletes forward, or
            # exits on an empty editor): what reaches the app is for the app action.
            for action in self.registry.actions_for(key_id, "main"):
                if action.startswith("app."):
                    event.stop()
                    event.prevent_default()
                    # Beside the message loop: an action may open a dialog, whose keys arrive
                    # through this same loop.
                    self.spawn(self.run_app_action(action))
                    return

    async def _run_shortcut(self, shortcut: PluginShortcut) -> None:
        import inspect

        if self.host.context is None:
            return
        try:
            result = shortcut.handler(self.host.context)
            if inspect.isawaitable(result):
                await result
        except Exception as error:  # a plugin's failure is reported; the UI goes on
            self.transcript.notice(f"{shortcut.key} ({shortcut.plugin}) failed: {error}", "error")

    async def run_app_action(self, action: str) -> None:
        """Perform one ``app.*`` action of the ``main`` context."""
        from knightcode._modes.interactive.actions import perform

        await perform(self, action)

    async def edit_externally(self) -> None:
        """``app.editor.external``: edit the text in ``externalEditor``, $VISUAL or $EDITOR."""
        from knightcode._modes.interactive.terminal import handed_back

        with handed_back(self, self.keyboard):
            self.editor.edit_externally(self.settings_model().external_editor)

    def editor_text(self) -> str:
        return self.editor.expanded_text

    def set_editor_text(self, text: str) -> None:
        self.editor.set_text(text)

    # --- fullscreen -----------------------------------------------------------------------------

    def fullscreen_pane(self) -> TranscriptPane:
        from knightcode._modes.interactive.fullscreen.pane import TranscriptPane

        return self.query_one("#transcript", TranscriptPane)

    def fullscreen_control(self) -> FullscreenControl:
        from knightcode._modes.interactive.fullscreen.control import FullscreenControl

        if self._fullscreen_control is None:
            bar = self.query_one("#search", Static)
            self._fullscreen_control = FullscreenControl(self.fullscreen_pane(), bar, self.registry)
        return self._fullscreen_control

    def on_transcript_pane_selected(self, message: TranscriptPane.Selected) -> None:
        self.selected_text = message.text
        if self.settings_model().fullscreen_copy_on_select:
            self.copy_to_clipboard_osc52(message.text)

    def on_transcript_pane_search_progress(self, message: TranscriptPane.SearchProgress) -> None:
        self.fullscreen_control().progress()

    def toggle_fullscreen(self) -> None:
        """Leave for the other mode: the app exits and is started again (same session)."""
        if self.agent.is_streaming:
            self.transcript.notice("Fullscreen switches once the agent is idle", "warning")
            return
        self.switching = True
        self._leaving_text = self.editor_text()
        self.exit(0)

    def carry(self) -> Carry:
        """What the app in the other mode takes over (after this one exited)."""
        from knightcode._modes.interactive.fullscreen import Carry

        items, options = self.transcript.items, self.transcript.options
        return Carry(items, options, self.inline_mark, self._leaving_text, self.status)

    def request_shutdown(self) -> None:
        """Quit once the current work settled (a plugin's ``ctx.shutdown()``)."""
        self.call_later(self.shutdown)

    async def shutdown(self, status: int = 0) -> None:
        """Leave: abort a run, let it settle, then exit the app."""
        self.exit_status = status
        if self.agent.is_streaming:
            self.agent.abort()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.agent.wait_idle(), 5)
        self.exit(status)
