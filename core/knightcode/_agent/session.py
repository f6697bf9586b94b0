"""``AgentSession``: one conversation — its state, and everything a mode or plugin does with it.

The state is owned here and changed only through the methods below: the session file, the
messages the model sees, the model and thinking level, the queues, the switches. The work is done
by collaborators: :mod:`.runner` runs a prompt (the turn loop, retries, overflow recovery),
:mod:`.session_ops` replaces the session (new, resume, fork, clone), :mod:`.tree_navigation`
moves in the tree, :mod:`.user_bash` runs ``!`` commands. It implements the plugin-facing
:class:`~knightcode._plugins.handles.AgentHandle`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from knightcode._abort import AbortSignal
from knightcode._agent.hook_bridge import HookBridge
from knightcode._agent.queues import MessageQueues, Mode
from knightcode._agent.retry import RetrySettings, last_assistant
from knightcode._agent.tool_set import PromptBuilder, ToolInfo, ToolSet
from knightcode._errors import KnightcodeError

if TYPE_CHECKING:
    from knightcode._agent.session_ops import ForkResult
    from knightcode._agent.tree_navigation import TreeResult
    from knightcode._llm.registry import ModelRegistry
    from knightcode._llm.types import Model
    from knightcode._plugins.context import HookContext
    from knightcode._plugins.definitions import ToolDefinition
    from knightcode._plugins.hooks import Hooks
    from knightcode._plugins.results import CompactionVerdict
    from knightcode._resources.discovery import ResourceSet
    from knightcode._session.context import SessionContext
    from knightcode._session.manager import SessionManager
    from knightcode._tools.backend import ExecutionBackend
    from knightcode._tools.context import ToolContext
    from knightcode._types.entries import CompactionEntry, ContextEdit
    from knightcode._types.events import AgentEvent, SessionEvent
    from knightcode._types.messages import (
        AgentMessage,
        AssistantMessage,
        ImageContent,
        ThinkingLevel,
        Usage,
        UserMessage,
    )

__all__ = ["AgentBusyError", "AgentSession", "AgentSessionOptions", "CompactionUnavailableError"]

Listener = Callable[["SessionEvent"], None]
CompactionTrigger = Literal[
    "before_prompt", "between_turns", "after_run", "overflow", "length", "manual"
]


class CompactionUnavailableError(KnightcodeError):
    """A manual compaction was asked for, but no plugin compacts (``builtin:compaction`` is
    disabled or not installed).
    """


class AgentBusyError(KnightcodeError):
    """A prompt arrived while the agent is working and no queueing behaviour was given."""


@dataclass
class AgentSessionOptions:
    """What an :class:`AgentSession` is built from.

    :param cwd: the project directory
    :param agent_dir: the agent directory
    :param session: the session file (or an in-memory one for ``--no-session``)
    :param models: the model registry (providers, keys, streaming)
    :param model: the model to talk to
    :param tools: the active tools by name
    :param system_prompt: the assembled system prompt
    :param backend: what tools read, write and run through
    :param hooks: fires plugin hooks (None: no plugins)
    :param hook_context: the plugins' ``ctx``, handed to plugin tools
    :param context: the session's context, when the caller built it already (start-up builds
        it once)
    :param thinking_level: the reasoning effort (``off`` … ``xhigh``)
    :param default_thinking_level: settings ``defaultThinkingLevel`` (None: not set), for the
        level a model switch lands on
    :param model_thinking_levels: settings ``modelThinkingLevels``, likewise
    :param thinking_budgets: settings ``thinkingBudgets``: token budgets per level for
        budget-based thinking (Anthropic); levels left out keep the provider's default
    :param temperature: ``--temperature``: the sampling temperature sent with every request
        (None: the provider's default)
    :param retry: retry settings
    :param block_images: settings ``images.blockImages``: images are replaced by a placeholder
        text in every request
    :param auto_resize_images: settings ``images.autoResize``: images the user sends and the
        ``read`` tool returns are shrunk to the providers' limits
    :param steering_mode: ``one-at-a-time`` or ``all``
    :param follow_up_mode: ``one-at-a-time`` or ``all``
    :param tool_timeout_ms: default per-call tool timeout
    :param idle_timeout_ms: longest silence of a provider stream
    :param auto_compaction: whether automatic compaction starts on
    :param shell_path: settings ``shellPath``
    :param shell_command_prefix: settings ``shellCommandPrefix``
    :param tool_set: every available tool and the active ones (start-up builds it so plugins
        can change the set); None: exactly ``tools`` with ``system_prompt``, fixed
    :param resources: skills and prompt templates, which ``/skill:name`` and ``/template``
        prompts expand to (None: none)
    """

    cwd: Path
    agent_dir: Path
    session: SessionManager
    models: ModelRegistry
    model: Model
    tools: dict[str, ToolDefinition]
    system_prompt: str
    backend: ExecutionBackend
    hooks: Hooks | None = None
    hook_context: HookContext | None = None
    context: SessionContext | None = None
    thinking_level: ThinkingLevel = "off"
    default_thinking_level: ThinkingLevel | None = None
    model_thinking_levels: Mapping[str, ThinkingLevel] | None = None
    thinking_budgets: Mapping[str, int] | None = None
    temperature: float | None = None
    retry: RetrySettings = field(default_factory=RetrySettings)
    block_images: bool = False
    auto_resize_images: bool = True
    steering_mode: Mode = "one-at-a-time"
    follow_up_mode: Mode = "one-at-a-time"
    tool_timeout_ms: int | None = None
    idle_timeout_ms: int = 300000
    auto_compaction: bool = True
    shell_path: str | None = None
    shell_command_prefix: str | None = None
    tool_set: ToolSet | None = None
    resources: ResourceSet | None = None


class AgentSession:
    """One conversation: prompt it, steer it, abort it, subscribe to its events."""

    def __init__(self, options: AgentSessionOptions) -> None:
        self.options = options
        self._session = options.session
        self._model = options.model
        self.resources: ResourceSet | None = options.resources
        """Skills and prompt templates; replaced on ``/reload``."""
        self._thinking_level: ThinkingLevel = options.thinking_level
        self._tool_set = options.tool_set or ToolSet(
            options.tools, {}, options.tools, options.system_prompt
        )
        self._retry = options.retry
        self._auto_compaction = options.auto_compaction
        context = options.context or self._session.build_context()
        self._messages: list[AgentMessage] = list(context.messages)
        self.queues = MessageQueues(
            self._queue_changed, options.steering_mode, options.follow_up_mode
        )
        self._listeners: list[Listener] = []
        self._bridge = HookBridge(options.hooks)
        self._signal = AbortSignal()
        self._idle = asyncio.Event()
        self._idle.set()
        self._aborted = False
        self._compacting = 0
        self.record_model_and_thinking(context)

    # --- state (AgentHandle) ----------------------------------------------------------------

    @property
    def cwd(self) -> Path:
        """The project directory."""
        return self.options.cwd

    @property
    def model(self) -> Model:
        """The model the next request goes to."""
        return self._model

    @property
    def thinking_level(self) -> ThinkingLevel:
        """The reasoning effort of the next request."""
        return self._thinking_level

    @property
    def messages(self) -> list[AgentMessage]:
        """What the model sees now. The list is the session's own: read it, do not change it."""
        return self._messages

    @property
    def session(self) -> SessionManager:
        """The current session file."""
        return self._session

    @property
    def model_registry(self) -> ModelRegistry:
        """Providers, models and keys."""
        return self.options.models

    @property
    def hooks(self) -> Hooks | None:
        """Fires plugin hooks (None without plugins)."""
        return self.options.hooks

    @property
    def tools(self) -> dict[str, ToolDefinition]:
        """The active tools by name."""
        return self._tool_set.active

    @property
    def tool_set(self) -> ToolSet:
        """Every available tool and the active ones."""
        return self._tool_set

    @property
    def active_tools(self) -> list[str]:
        """The names of the tools the model is offered."""
        return list(self._tool_set.active)

    def available_tools(self) -> list[ToolInfo]:
        """Every tool this session could offer, with its origin and whether it is active."""
        return self._tool_set.describe()

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Offer exactly ``names`` from the next model request on (a run in progress keeps its
        tools); the system prompt is rebuilt to list them.

        :raises ValueError: a name is not an available tool (nothing changes)
        """
        self._tool_set.set_active(names)

    def add_tools(
        self,
        definitions: Sequence[ToolDefinition],
        *,
        origin: str = "plugin",
        active: bool = True,
    ) -> list[str]:
        """Make tools available while the session runs, from the next run on (a run in progress
        keeps its tools and system prompt); the system prompt is rebuilt. A name already
        available gets the new definition and keeps whether it is active. Added tools survive
        ``/reload``. Returns their names.

        :param origin: the plugin they come from (shown by ``available_tools`` and ``/tools``)
        :param active: offer the new tools to the model, not just make them available
        """
        return self._tool_set.add(definitions, origin, active=active)

    def remove_tools(self, names: Sequence[str]) -> list[str]:
        """Make tools unavailable from the next run on (names not there are ignored); they stay
        removed after ``/reload`` until added again. Returns the names removed.
        """
        return self._tool_set.remove(names)

    def set_tool_enabled(self, name: str, enabled: bool, *, save: bool = False) -> None:
        """Switch one tool on or off from the next request on.

        :param save: also make it the default of new sessions (user settings
            ``tools.enabled``)
        :raises ValueError: ``name`` is not an available tool
        """
        active = [tool for tool in self._tool_set.active if tool != name]
        self._tool_set.set_active([*active, name] if enabled else active)
        if save:
            from knightcode._config.edit_settings import set_setting
            from knightcode._config.loading import SETTINGS_FILENAME

            path = self.options.agent_dir / SETTINGS_FILENAME
            set_setting(path, f"tools.enabled.{name}", enabled)

    @property
    def system_prompt(self) -> str:
        """The assembled system prompt (``before_agent_start`` may change it per run)."""
        return self._tool_set.system_prompt

    @property
    def retry(self) -> RetrySettings:
        """The retry settings in effect."""
        return self._retry

    @property
    def signal(self) -> AbortSignal:
        """The abort signal of the current run (set by :meth:`abort`); between runs, a fresh one
        that nothing aborts.
        """
        return self._signal

    @property
    def is_streaming(self) -> bool:
        """Whether a run (including its retries and queued work) is in progress."""
        return not self._idle.is_set()

    @property
    def is_compacting(self) -> bool:
        """Whether the compaction hook is running right now."""
        return self._compacting > 0

    @property
    def auto_compaction_enabled(self) -> bool:
        """Whether automatic compaction is on (settings ``compaction.enabled``, RPC
        ``set_auto_compaction``); the compaction plugin reads it. Manual compaction always
        works.
        """
        return self._auto_compaction

    def reconfigure(
        self,
        available: Mapping[str, ToolDefinition],
        origins: Mapping[str, str],
        defaults: Sequence[str],
        build_prompt: PromptBuilder | None,
        system_prompt: str | None = None,
    ) -> None:
        """New tools and system prompt after a reload (``/reload``), used from the next run on;
        tools switched on or off during the session stay so.
        """
        self._tool_set.replace(available, origins, defaults, build_prompt, system_prompt)

    def set_auto_compaction(self, enabled: bool) -> None:
        """Switch automatic compaction on or off."""
        self._auto_compaction = enabled

    def set_auto_retry(self, enabled: bool) -> None:
        """Switch automatic retries on or off."""
        self._retry = replace(self._retry, enabled=enabled)

    def set_steering_mode(self, mode: Mode) -> None:
        """How many steering messages one delivery takes."""
        self.queues.steering_mode = mode

    def set_follow_up_mode(self, mode: Mode) -> None:
        """How many follow-up messages one delivery takes."""
        self.queues.follow_up_mode = mode

    def record_model_and_thinking(self, context: SessionContext | None = None) -> None:
        """Write ``model_change``/``thinking_level_change`` entries when the session's recorded
        state differs from what this session uses (a new session records both, as the reference
        tool's files do).
        """
        session = self._session
        fresh = not session.get_entries()
        context = context or session.build_context()
        recorded = context.model
        if recorded is None or (recorded.provider, recorded.model_id) != (
            self._model.provider,
            self._model.id,
        ):
            session.append_model_change(self._model.provider, self._model.id)
        if fresh or context.thinking_level != self._thinking_level:
            session.append_thinking_level_change(self._thinking_level)

    # --- events -----------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every session event; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def publish(self, event: SessionEvent) -> None:
        """Send a session-level event (retry, queue, compaction, settle …) to the subscribers."""
        for listener in self._listeners:
            listener(event)

    async def emit(self, event: AgentEvent) -> None:
        """Record an event of the turn loop (a finished message goes to the session file), fire
        its plugin hook, then tell the subscribers.
        """
        if event["type"] == "message_end":
            self._session.append_message(event["message"])
        elif event["type"] == "turn_end":
            self._session.sync()
        await self._bridge.forward(event)
        for listener in self._listeners:
            listener(event)

    def _queue_changed(self, steering: list[str], follow_up: list[str]) -> None:
        self.publish({"type": "queue_update", "steering": steering, "followUp": follow_up})

    # --- messages and the session file ------------------------------------------------------

    def rebuild_messages(self) -> None:
        """What the model sees, rebuilt from the session file (after a compaction, an edit or a
        move in the tree). In place: a running loop holds this very list.
        """
        self._messages[:] = self._session.build_context().messages

    def drop_message(self, message: AgentMessage) -> None:
        """Stop sending ``message`` (a failed attempt; it stays in the session file)."""
        for index in range(len(self._messages) - 1, -1, -1):
            if self._messages[index] is message or self._messages[index] == message:
                del self._messages[index]
                return

    def add_message(self, message: AgentMessage) -> None:
        """Add a message outside a run (a user's ``!command``): to the file and the context."""
        self._messages.append(message)
        self._session.append_message(message)

    def replace_session(self, session: SessionManager, *, restore_messages: bool = True) -> None:
        """Continue in ``session`` (new, resumed or forked): the old file is closed unless it is
        the same manager, queued messages are dropped.
        """
        if session is not self._session:
            if session.notice_listener is None:  # repairs of the new file reach the same place
                session.set_notice_listener(self._session.notice_listener)
            self._session.close()
            self._session = session
        if restore_messages:
            self.rebuild_messages()
        self.queues.clear()

    def append_entry(self, custom_type: str, data: object = None) -> str:
        """Store plugin state as a ``custom`` entry (never sent to the model); publishes
        ``entry_appended``. Returns the entry id.
        """
        entry_id = self._session.append_custom(custom_type, data)
        entry = self._session.get_entry(entry_id)
        assert entry is not None
        self.publish({"type": "entry_appended", "entry": entry})
        return entry_id

    def set_session_name(self, name: str | None) -> None:
        """Name the session (a ``session_info`` entry); publishes ``session_info_changed``,
        without ``name`` when it was cleared.
        """
        cleaned = (name or "").strip()
        self._session.append_session_info(cleaned)
        if cleaned:
            self.publish({"type": "session_info_changed", "name": cleaned})
        else:
            self.publish({"type": "session_info_changed"})

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        *,
        details: object = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> CompactionEntry:
        """Write a ``compaction`` entry and rebuild the messages from it."""
        entry_id = self._session.append_compaction(
            summary,
            first_kept_entry_id,
            tokens_before,
            details=details,
            from_hook=from_hook,
            usage=usage,
        )
        entry = self._session.get_entry(entry_id)
        assert entry is not None and entry["type"] == "compaction"
        self.rebuild_messages()
        return entry

    def append_context_edit(self, edits: list[ContextEdit], reason: str | None = None) -> str:
        """Write a ``context_edit`` entry and rebuild the messages with it applied."""
        entry_id = self._session.append_context_edit(edits, reason=reason)
        self.rebuild_messages()
        return entry_id

    # --- model and thinking level -------------------------------------------------------------

    async def set_model(
        self,
        model: Model,
        source: Literal["set", "cycle", "restore"] = "set",
        *,
        thinking_level: ThinkingLevel | None = None,
    ) -> None:
        """Switch the model for the next request, recorded as a ``model_change`` entry (except
        when restored from the session, which recorded it).

        Unless restored, the thinking level follows the switch as in the reference:
        ``thinking_level`` (a scoped model's ``:level``), else settings ``modelThinkingLevels``
        for the model, else ``defaultThinkingLevel``, else the current level — clamped to what
        the model supports (:mod:`~knightcode._agent.thinking_switch`).
        """
        previous = self._model
        self._model = model
        if source != "restore" and (previous.provider, previous.id) != (model.provider, model.id):
            self._session.append_model_change(model.provider, model.id)
        if source != "restore":
            from knightcode._agent.thinking_switch import level_for_model_switch

            options = self.options
            await self.set_thinking_level(
                level_for_model_switch(
                    model,
                    self._thinking_level,
                    explicit=thinking_level,
                    default_level=options.default_thinking_level,
                    per_model=options.model_thinking_levels,
                )
            )
        if self.hooks is not None:
            await self.hooks.model_select(model=model, previous_model=previous, source=source)

    async def set_thinking_level(self, level: ThinkingLevel) -> None:
        """Change the reasoning effort, recorded as a ``thinking_level_change`` entry.

        The level is clamped to what the model supports, as in the reference (``xhigh`` on a
        model without it becomes ``high``, anything on a model that does not reason ``off``).
        """
        from knightcode._agent.thinking_switch import clamp_thinking_level

        level = clamp_thinking_level(self._model, level)
        previous = self._thinking_level
        if level == previous:
            return
        self._thinking_level = level
        self._session.append_thinking_level_change(level)
        self.publish({"type": "thinking_level_changed", "level": level})
        if self.hooks is not None:
            await self.hooks.thinking_level_select(level=level, previous_level=previous)

    async def restore_recorded(self, model: Model | None, thinking_level: ThinkingLevel) -> None:
        """Adopt the model and thinking level a resumed session recorded (the model only when
        it is still known); nothing is written, ``model_select`` fires with ``"restore"``.
        """
        if model is not None and model != self._model:
            await self.set_model(model, source="restore")
        self._thinking_level = thinking_level

    # --- prompting ----------------------------------------------------------------------------

    def user_message(self, text: str, images: list[ImageContent] | None = None) -> UserMessage:
        """A user message: a text block, then the images. Always a list of blocks, never a bare
        string, as the reference stores a prompt — clients written for it read
        ``content[0].text`` in ``get_messages``, the events and the session file.

        Images are shrunk to the providers' limits unless settings ``images.autoResize`` is off
        (the reference does this for every image the user sends: RPC ``images``, pasted
        screenshots, ``@file``).
        """
        if images and self.options.auto_resize_images:
            from knightcode._tools.image_resize import resize_image_content

            images = [resize_image_content(image) for image in images]
        return {
            "role": "user",
            "content": [{"type": "text", "text": text}, *(images or [])],
            "timestamp": int(time.time() * 1000),
        }

    async def prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        *,
        source: Literal["interactive", "rpc", "extension"] = "rpc",
        streaming_behavior: Literal["steer", "followUp"] | None = None,
        on_accepted: Callable[[], None] | None = None,
    ) -> None:
        """Send a user prompt and run until the agent settles.

        While a run is in progress the prompt is queued as ``steer`` or ``followUp`` when
        ``streaming_behavior`` says so, and refused otherwise.

        :param on_accepted: called once, synchronously, as soon as the prompt is accepted (it
            claimed the session or was queued) and before any event of its run — RPC answers
            the ``prompt`` command there, so the response precedes the run's records
        :raises AgentBusyError: a run is in progress and no ``streaming_behavior`` was given
        """
        from knightcode._agent.runner import PromptRunner

        if self.is_streaming:
            # A queued message is expanded now: no input hook sees it later.
            if streaming_behavior == "steer":
                self.steer(self.expand(text), images)
            elif streaming_behavior == "followUp":
                self.follow_up(self.expand(text), images)
            else:
                raise AgentBusyError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or "
                    "'followUp') to queue the message."
                )
            if on_accepted is not None:
                on_accepted()
            return
        # Claim the session before the first await, so a prompt arriving while the hooks below
        # run is queued or refused instead of starting a second run beside this one.
        runner = PromptRunner(self, self._begin())
        if on_accepted is not None:
            on_accepted()
        try:
            prepared = await runner.prepare(text, images or [], source)
        except BaseException:
            self._end()
            raise
        if prepared is None:
            self._end()  # a plugin handled the input: nothing runs, nothing settles
            return
        await self._settle_after(runner.run(*prepared))

    def expand(self, text: str) -> str:
        """``/skill:name args`` or ``/template args`` as the prompt it stands for; any other
        text unchanged. Messages queued while the agent runs (steer, follow-up) go through this.
        """
        from knightcode._resources.expansion import expand_input

        return expand_input(text, self.resources)

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        """Queue a message delivered after the current tool batch."""
        self.queues.add_steering(self.user_message(text, images))

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        """Queue a message delivered when the agent would otherwise stop."""
        self.queues.add_follow_up(self.user_message(text, images))

    def abort(self) -> None:
        """Stop the current run: the stream is cancelled, running tools are killed, queued
        messages stay queued for the caller to restore.
        """
        if self.is_streaming:
            self._aborted = True
            self._signal.abort()

    async def wait_idle(self) -> None:
        """Wait until no run is in progress."""
        await self._idle.wait()

    def _begin(self) -> AbortSignal:
        """Mark a run as in progress, with a fresh abort signal."""
        self._idle.clear()
        self._signal = AbortSignal()
        self._aborted = False
        return self._signal

    def _end(self) -> None:
        # Between runs, ctx.signal is a fresh one that nothing aborts (abort() acts on runs): a
        # plugin's idle-time work must not inherit the last run's abort.
        self._signal = AbortSignal()
        self._idle.set()

    async def _settle_after(self, work: Awaitable[object]) -> None:
        """Await ``work`` as the session's run (already begun), then settle."""
        try:
            await work
        finally:
            aborted = self._aborted
            if self.hooks is not None:
                await self.hooks.agent_before_settle(aborted=aborted)
            self._session.sync()
            self._end()
            self.publish({"type": "agent_settled", "aborted": aborted})

    # --- compaction -----------------------------------------------------------------------------

    async def check_compaction(
        self,
        trigger: CompactionTrigger,
        message: AssistantMessage | None,
        will_retry: bool = False,
        custom_instructions: str | None = None,
    ) -> CompactionVerdict | None:
        """Ask the compaction hook whether to compact at this point."""
        hooks = self.hooks
        if hooks is None or not hooks.has("session_check_compaction"):
            return None
        self._compacting += 1
        try:
            return await hooks.session_check_compaction(
                trigger=trigger,
                message=message,
                will_retry=will_retry,
                custom_instructions=custom_instructions,
            )
        finally:
            self._compacting -= 1

    async def compact(self, custom_instructions: str | None = None) -> CompactionVerdict:
        """Compact now (``/compact``, RPC ``compact``): a running prompt is aborted first, and
        the compaction counts as the session's run, so prompts arriving meanwhile are queued or
        refused as during any run.

        :raises CompactionUnavailableError: no plugin compacts
        """
        from knightcode._plugins.results import CompactionVerdict

        if self.hooks is None or not self.hooks.has("session_check_compaction"):
            raise CompactionUnavailableError(
                "compaction is disabled: the builtin:compaction plugin is not loaded "
                "(see 'knightcode config list')"
            )
        if self.is_streaming:
            self.abort()
            await self.wait_idle()
        self._begin()
        verdict: CompactionVerdict | None = None

        async def run() -> None:
            nonlocal verdict
            verdict = await self.check_compaction(
                "manual", last_assistant(self._messages), custom_instructions=custom_instructions
            )

        await self._settle_after(run())
        return verdict or CompactionVerdict(compacted=False)

    # --- tools ----------------------------------------------------------------------------------

    def tool_context(
        self, tool_call_id: str, signal: AbortSignal, *, host_access: bool = False
    ) -> ToolContext:
        """The ``ctx`` of one tool call.

        :param host_access: the tool asked to run on this machine even under a sandbox
            (``ToolDefinition.host_access``): it gets the local backend and the host folder
        """
        from knightcode._tools.backend import agent_cwd
        from knightcode._tools.context import ToolContext
        from knightcode._tools.local_backend import LocalBackend

        options = self.options
        backend = options.backend
        if host_access and not isinstance(backend, LocalBackend):
            backend = LocalBackend(options.cwd)
        return ToolContext(
            cwd=agent_cwd(backend, options.cwd),
            backend=backend,
            signal=signal,
            shell_path=options.shell_path,
            shell_command_prefix=options.shell_command_prefix,
            auto_resize_images=options.auto_resize_images,
            agent_dir=options.agent_dir,
            tool_call_id=tool_call_id,
            context=options.hook_context,
        )

    # --- moving in and between sessions -------------------------------------------------------

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> TreeResult:
        """Move to another point of the session tree (``/tree``, RPC); see
        :func:`knightcode._agent.tree_navigation.navigate_tree`.
        """
        from knightcode._agent.tree_navigation import navigate_tree

        return await navigate_tree(
            self,
            target_id,
            summarize=summarize,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Continue in a fresh session; True when a plugin cancelled."""
        from knightcode._agent import session_ops

        return await session_ops.new_session(self, parent_session)

    async def switch_session(
        self, session_path: str | Path, *, signal: AbortSignal | None = None
    ) -> bool:
        """Resume another session file; True when a plugin cancelled. ``signal`` aborts looking
        up the recorded model at a live server (the current model is then kept).
        """
        from knightcode._agent import session_ops

        return await session_ops.switch_session(self, session_path, signal)

    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> ForkResult:
        """Continue in a new session file holding the branch up to ``entry_id``."""
        from knightcode._agent import session_ops

        return await session_ops.fork(self, entry_id, position)

    async def clone(self) -> bool:
        """Copy the current branch into a new session file; True when a plugin cancelled."""
        from knightcode._agent import session_ops

        return await session_ops.clone(self)
