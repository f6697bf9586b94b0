"""``AgentSession``: the agent loop bound to a session file, settings, model and plugins.

It owns the conversation state (the messages the model sees), persists every message as it
completes, forwards events to plugin hooks and to subscribers (the JSON/RPC writers, the UI),
and adds what a single loop run does not do: automatic retry of transient provider errors,
queued steering and follow-up messages, overflow recovery through the compaction hook, and the
``agent_settled`` record that says no automatic work remains.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from knightcode._agent.hook_bridge import HookBridge
from knightcode._agent.llm_context import to_provider_messages
from knightcode._agent.loop import run_agent_loop, run_agent_loop_continue
from knightcode._agent.loop_types import Event, LoopConfig, Message
from knightcode._agent.queues import MessageQueues, Mode
from knightcode._agent.retry import (
    RetrySettings,
    last_assistant,
    retry_delay_ms,
    sleep_unless_aborted,
)
from knightcode._errors import KnightcodeError
from knightcode._plugins.definitions import ToolDefinition

if TYPE_CHECKING:
    from knightcode._llm.registry import ModelRegistry
    from knightcode._llm.types import Model
    from knightcode._plugins.context import ExtensionContext
    from knightcode._plugins.host import PluginHost
    from knightcode._session.manager import SessionManager

Listener = Callable[[Event], None]


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
    :param host: the plugin host (None: no plugins)
    :param tool_context: builds the ``ctx`` passed to a tool for one call
    :param thinking_level: the reasoning effort (``off`` … ``xhigh``)
    :param retry: retry settings
    :param steering_mode: ``one-at-a-time`` or ``all``
    :param follow_up_mode: ``one-at-a-time`` or ``all``
    :param tool_timeout_ms: default per-call tool timeout
    """

    cwd: Path
    agent_dir: Path
    session: SessionManager
    models: ModelRegistry
    model: Model
    tools: dict[str, ToolDefinition]
    system_prompt: str
    host: PluginHost | None = None
    tool_context: Callable[[str, asyncio.Event], Any] | None = None
    thinking_level: str = "off"
    retry: RetrySettings = field(default_factory=RetrySettings)
    steering_mode: Mode = "one-at-a-time"
    follow_up_mode: Mode = "one-at-a-time"
    tool_timeout_ms: int | None = None
    idle_timeout_ms: int = 300000
    auto_compaction: bool = True


class AgentSession:
    """One conversation: prompt it, steer it, abort it, subscribe to its events."""

    def __init__(self, options: AgentSessionOptions) -> None:
        self.options = options
        self.cwd = options.cwd
        self.session = options.session
        self.models = options.models
        self.model = options.model
        self.thinking_level = options.thinking_level
        self.tools = options.tools
        self.system_prompt = options.system_prompt
        self.host = options.host
        self.retry = options.retry
        self.messages: list[Message] = list(self.session.build_context().messages)  # type: ignore[arg-type]
        self.queues = MessageQueues(
            self._queue_changed, options.steering_mode, options.follow_up_mode
        )
        self._listeners: list[Listener] = []
        self._hooks = HookBridge(self.host)
        self._signal = asyncio.Event()
        self._running: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._retry_attempt = 0
        self._retry_after_ms: float | None = None
        self._aborted = False
        self._overflow_attempted = False
        self._compacting = 0
        self.auto_compaction_enabled = options.auto_compaction
        """Whether automatic compaction is on (settings ``compaction.enabled``, RPC
        ``set_auto_compaction``); the compaction plugin reads it. Manual compaction always works."""
        self._record_model_and_thinking()

    # --- state ----------------------------------------------------------------------------

    @property
    def is_streaming(self) -> bool:
        """Whether a run (including its retries and queued work) is in progress."""
        return not self._idle.is_set()

    @property
    def ctx(self) -> ExtensionContext | None:
        return self.host.context if self.host is not None else None

    def _record_model_and_thinking(self) -> None:
        """Write ``model_change``/``thinking_level_change`` entries when the session's recorded
        state differs from what this run uses (a new session records both).
        """
        context = self.session.build_context()
        if not self.session.get_entries():
            # A new session starts by recording both, as the reference tool's files do.
            self.session.append_model_change(self.model.provider, self.model.id)
            self.session.append_thinking_level_change(self.thinking_level)
            return
        recorded = context.model
        if recorded is None or (recorded.provider, recorded.model_id) != (
            self.model.provider,
            self.model.id,
        ):
            self.session.append_model_change(self.model.provider, self.model.id)
        if context.thinking_level != self.thinking_level:
            self.session.append_thinking_level_change(self.thinking_level)

    # --- events ---------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every session event; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def publish(self, event: Event) -> None:
        """Send a session-level event (retry, queue, settle …) to the subscribers."""
        for listener in self._listeners:
            listener(event)

    async def _emit(self, event: Event) -> None:
        kind = event["type"]
        if kind == "message_end":
            self.session.append_message(event["message"])
        elif kind == "agent_end":
            event["willRetry"] = self._will_retry(event["messages"])
        elif kind == "turn_end":
            self.session.sync()
        await self._hooks.forward(event)
        for listener in self._listeners:
            listener(event)

    def _queue_changed(self, steering: list[str], follow_up: list[str]) -> None:
        self.publish({"type": "queue_update", "steering": steering, "followUp": follow_up})

    # --- prompting ------------------------------------------------------------------------

    def user_message(self, text: str, images: list[dict[str, Any]] | None = None) -> Message:
        """A user message with optional image blocks (``{"type":"image","data","mimeType"}``)."""
        content: str | list[dict[str, Any]] = text
        if images:
            content = [{"type": "text", "text": text}, *images]
        return {"role": "user", "content": content, "timestamp": int(time.time() * 1000)}

    async def prompt(
        self,
        text: str,
        images: list[dict[str, Any]] | None = None,
        *,
        source: str = "rpc",
        streaming_behavior: str | None = None,
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
        if self.is_streaming:
            if streaming_behavior == "steer":
                self.steer(text, images)
            elif streaming_behavior == "followUp":
                self.follow_up(text, images)
            else:
                raise AgentBusyError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
                )
            if on_accepted is not None:
                on_accepted()
            return
        # Claim the session before the first await, so a prompt arriving while the hooks below
        # run is queued or refused instead of starting a second run beside this one.
        self._begin()
        if on_accepted is not None:
            on_accepted()
        try:
            prepared = await self._prepare_prompt(text, images or [], source)
        except BaseException:
            self._end()
            raise
        if prepared is None:
            self._end()  # a plugin handled the input: nothing runs, nothing settles
            return
        prompts, system_prompt = prepared

        async def run() -> None:
            await self.check_compaction("before_prompt", last_assistant(self.messages))
            await self._run(prompts, system_prompt)

        await self._run_exclusive(run)

    async def _prepare_prompt(
        self, text: str, images: list[dict[str, Any]], source: str
    ) -> tuple[list[Message], str] | None:
        """Apply the ``input`` and ``before_agent_start`` hooks; None when the input was handled."""
        if self.host is not None and self.host.has_handlers("input"):
            verdict = await self.host.emit("input", text=text, images=images, source=source)
            if verdict["action"] == "handled":
                return None
            text, images = verdict["text"], verdict["images"] or []
        prompts: list[Message] = []
        system_prompt = self.system_prompt
        if self.host is not None and self.host.has_handlers("before_agent_start"):
            started = await self.host.emit(
                "before_agent_start", prompt=text, images=images, system_prompt=system_prompt
            )
            system_prompt = started["system_prompt"] or system_prompt
            prompts.extend(self._custom_message(m) for m in started["messages"])
        prompts.insert(0, self.user_message(text, images))
        return prompts, system_prompt

    def _custom_message(self, spec: Mapping[str, Any]) -> Message:
        message: Message = {
            "role": "custom",
            "customType": str(spec.get("custom_type") or spec.get("customType") or "plugin"),
            "content": spec.get("content", ""),
            "display": bool(spec.get("display", True)),
            "timestamp": int(time.time() * 1000),
        }
        if spec.get("details") is not None:
            message["details"] = spec["details"]
        return message

    def steer(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        """Queue a message delivered after the current tool batch."""
        self.queues.add_steering(self.user_message(text, images))

    def follow_up(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        """Queue a message delivered when the agent would otherwise stop."""
        self.queues.add_follow_up(self.user_message(text, images))

    def abort(self) -> None:
        """Stop the current run: the stream is cancelled, running tools are killed, queued
        messages stay queued for the caller to restore.
        """
        if self.is_streaming:
            self._aborted = True
            self._signal.set()

    async def wait_idle(self) -> None:
        """Wait until no run is in progress."""
        await self._idle.wait()

    def _begin(self) -> None:
        """Mark a run as in progress, with a fresh abort signal."""
        self._idle.clear()
        self._signal = asyncio.Event()
        self._aborted = False
        self._retry_attempt = 0
        self._overflow_attempted = False

    def _end(self) -> None:
        self._idle.set()

    async def _run_exclusive(self, work: Callable[[], Any]) -> None:
        """Run ``work`` as the session's run (already begun), then settle."""
        if self._idle.is_set():
            self._begin()
        try:
            await work()
        finally:
            aborted = self._aborted
            if self.host is not None and self.host.has_handlers("agent_before_settle"):
                await self.host.emit("agent_before_settle", aborted=aborted)
            self.session.sync()
            self._end()
            self.publish({"type": "agent_settled", "aborted": aborted})

    # --- the run --------------------------------------------------------------------------

    def _loop_config(self, system_prompt: str) -> LoopConfig:
        signal = self._signal
        factory = self.options.tool_context
        return LoopConfig(
            stream=self._stream_function(system_prompt),
            tools=self.tools,
            signal=signal,
            tool_context=(lambda call_id: factory(call_id, signal))
            if factory
            else (lambda call_id: self.ctx),
            transform_context=self._transform_context if self._has("context") else None,
            before_tool_call=self._before_tool_call if self._has("tool_call") else None,
            after_tool_call=self._after_tool_call if self._has("tool_result") else None,
            get_steering=self.queues.take_steering,
            get_follow_up=self.queues.take_follow_up,
            prepare_next_turn=self._between_turns
            if self._has("session_check_compaction")
            else None,
            tool_timeout_ms=self.options.tool_timeout_ms,
        )

    def _has(self, hook: str) -> bool:
        return self.host is not None and self.host.has_handlers(hook)

    async def _run(self, prompts: list[Message], system_prompt: str) -> None:
        produced = await run_agent_loop(
            prompts, self.messages, self._loop_config(system_prompt), self._emit
        )
        while True:
            failed = last_assistant(produced)
            recovery = self._recovery_trigger(failed)
            if failed is not None and recovery is not None:
                self._overflow_attempted = True
                verdict = await self.check_compaction(
                    recovery, failed, will_retry=self._recovery_retries(failed)
                )
                if not (verdict and verdict.get("retry")) or self._signal.is_set():
                    return
                # Like a retried error, the failed attempt stays in the session file but is not
                # sent again (nor can the run continue from an assistant message). A compaction
                # rebuilt the messages from the session, so look for it by value too.
                self._forget(failed)
                produced = await run_agent_loop_continue(
                    self.messages, self._loop_config(system_prompt), self._emit
                )
                continue
            if (
                failed is None
                or not self._retryable(failed)
                or self._retry_attempt >= self.retry.max_retries
            ):
                if self._retry_attempt and failed is not None:
                    self._retry_finished(failed)
                if not self._signal.is_set():
                    await self.check_compaction("after_run", failed)
                return
            self._retry_attempt += 1
            delay = retry_delay_ms(self.retry, self._retry_attempt, self._retry_after_ms)
            self.publish(
                {
                    "type": "auto_retry_start",
                    "attempt": self._retry_attempt,
                    "maxAttempts": self.retry.max_retries,
                    "delayMs": delay,
                    "errorMessage": failed.get("errorMessage", ""),
                }
            )
            # The failed attempt stays in the session file but is not sent again.
            if self.messages and self.messages[-1] is failed:
                self.messages.pop()
            if not await sleep_unless_aborted(delay, self._signal):
                self.publish(
                    {
                        "type": "auto_retry_end",
                        "success": False,
                        "attempt": self._retry_attempt,
                        "finalError": "Retry cancelled",
                    }
                )
                return
            produced = await run_agent_loop_continue(
                self.messages, self._loop_config(system_prompt), self._emit
            )

    def _forget(self, failed: Message) -> None:
        """Drop the failed attempt (the last message equal to it) from the messages sent."""
        for index in range(len(self.messages) - 1, -1, -1):
            if self.messages[index] is failed or self.messages[index] == failed:
                del self.messages[index]
                return

    def _recovery_trigger(self, message: Message | None) -> str | None:
        """``"overflow"`` or ``"length"`` when this failed attempt qualifies for the one
        compact-and-retry recovery of a prompt, else None.
        """
        from knightcode._llm.errors import is_context_overflow

        if (
            message is None
            or self._overflow_attempted
            or self._signal.is_set()
            or not self._has("session_check_compaction")
        ):
            return None
        if not self.auto_compaction_enabled:
            return None  # recovery is automatic compaction: off with it (agent_end willRetry false)
        stop = message.get("stopReason")
        if is_context_overflow(cast(Any, message), self.model.context_window):
            return "overflow"
        has_calls = any(block.get("type") == "toolCall" for block in message.get("content", []))
        output = int((message.get("usage") or {}).get("output") or 0)
        # Only an *early* length stop is recovered: one that used the whole output limit would
        # stop at the same place after a compaction.
        if stop == "length" and not has_calls and output < self.model.max_tokens:
            return "length"
        return None

    @property
    def signal(self) -> asyncio.Event:
        """The abort event of the current run (set by :meth:`abort`); long work a plugin does
        for the run — a summary request — should watch it.
        """
        return self._signal

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> dict[str, Any]:
        """Move to another point of the session tree (``/tree``, RPC), optionally leaving a
        summary of the branch being left; see :func:`knightcode._agent.tree_navigation.navigate_tree`.
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

    @property
    def is_compacting(self) -> bool:
        """Whether the compaction hook is running right now."""
        return self._compacting > 0

    async def check_compaction(
        self,
        trigger: str,
        message: Message | None,
        will_retry: bool = False,
        custom_instructions: str | None = None,
    ) -> Mapping[str, Any] | None:
        """Ask the compaction hook whether to compact at this point; after a compaction the
        messages the model sees are rebuilt from the session (summary + kept entries).
        """
        if not self._has("session_check_compaction"):
            return None
        assert self.host is not None
        self._compacting += 1
        try:
            verdict = await self.host.emit(
                "session_check_compaction",
                trigger=trigger,
                message=message,
                will_retry=will_retry,
                custom_instructions=custom_instructions,
            )
        finally:
            self._compacting -= 1
        if isinstance(verdict, Mapping) and verdict.get("compacted"):
            # In place: a running loop holds this very list.
            self.messages[:] = self.session.build_context().messages  # type: ignore[assignment]
        return verdict if isinstance(verdict, Mapping) else None

    async def compact(self, custom_instructions: str | None = None) -> Mapping[str, Any]:
        """Compact now (``/compact``, RPC ``compact``): a running prompt is aborted first, and
        the compaction counts as the session's run, so prompts arriving meanwhile are queued or
        refused as during any run.

        :returns: the hook's verdict (its ``result`` describes the compaction)
        :raises CompactionUnavailableError: no plugin compacts
        """
        if not self._has("session_check_compaction"):
            raise CompactionUnavailableError(
                "compaction is disabled: the builtin:compaction plugin is not loaded "
                "(see 'knightcode config list')"
            )
        if self.is_streaming:
            self.abort()
            await self.wait_idle()
        verdict: Mapping[str, Any] | None = None

        async def run() -> None:
            nonlocal verdict
            verdict = await self.check_compaction(
                "manual", last_assistant(self.messages), custom_instructions=custom_instructions
            )

        await self._run_exclusive(run)
        return verdict or {"compacted": False, "retry": False}

    async def _between_turns(self, turn: Any) -> None:
        await self.check_compaction("between_turns", turn.message)

    def _retry_finished(self, last: Message) -> None:
        success = last.get("stopReason") not in ("error", "aborted")
        event: Event = {
            "type": "auto_retry_end",
            "success": success,
            "attempt": self._retry_attempt,
        }
        if not success:
            event["finalError"] = (
                last.get("errorMessage", "") if last.get("stopReason") == "error" else "Aborted"
            )
        self.publish(event)

    def _retryable(self, message: Message) -> bool:
        from knightcode._llm.errors import is_context_overflow, is_retryable

        if message.get("stopReason") != "error" or not self.retry.enabled or self._signal.is_set():
            return False
        return is_retryable(cast(Any, message)) and not is_context_overflow(
            cast(Any, message), self.model.context_window
        )

    @staticmethod
    def _recovery_retries(message: Message) -> bool:
        """Whether a recovery compaction is followed by a retry: not for a silent overflow (a
        complete answer whose reported input exceeded the window), which is kept as it is.
        """
        return message.get("stopReason") != "stop"

    def _will_retry(self, messages: list[Message]) -> bool:
        failed = last_assistant(messages)
        if failed is None:
            return False
        if self._recovery_trigger(failed) is not None:
            return self._recovery_retries(failed)
        return self._retryable(failed) and self._retry_attempt < self.retry.max_retries

    # --- plugin actions ---------------------------------------------------------------------

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        """Store plugin state as a ``custom`` entry (never sent to the model); publishes
        ``entry_appended``. Returns the entry id.
        """
        entry_id = self.session.append_custom(custom_type, data)
        self.publish({"type": "entry_appended", "entry": self.session.get_entry(entry_id)})
        return entry_id

    def set_session_name(self, name: str | None) -> None:
        """Name the session (a ``session_info`` entry); publishes ``session_info_changed``,
        without ``name`` when it was cleared.
        """
        cleaned = (name or "").strip()
        self.session.append_session_info(cleaned)
        event: Event = {"type": "session_info_changed"}
        if cleaned:
            event["name"] = cleaned
        self.publish(event)

    # --- model and thinking level -----------------------------------------------------------

    async def set_model(self, model: Model, source: str = "set") -> None:
        """Switch the model for the next request, recorded as a ``model_change`` entry."""
        previous = self.model
        self.model = model
        if (previous.provider, previous.id) != (model.provider, model.id):
            self.session.append_model_change(model.provider, model.id)
        if self._has("model_select"):
            assert self.host is not None
            await self.host.emit(
                "model_select", model=model, previous_model=previous, source=source
            )

    async def set_thinking_level(self, level: str) -> None:
        """Change the reasoning effort, recorded as a ``thinking_level_change`` entry."""
        previous = self.thinking_level
        if level == previous:
            return
        self.thinking_level = level
        self.session.append_thinking_level_change(level)
        self.publish({"type": "thinking_level_changed", "level": level})
        if self._has("thinking_level_select"):
            assert self.host is not None
            await self.host.emit("thinking_level_select", level=level, previous_level=previous)

    # --- provider and hooks ---------------------------------------------------------------

    def _stream_function(
        self, system_prompt: str
    ) -> Callable[[list[Message], Mapping[str, ToolDefinition]], AsyncIterator[Event]]:
        from knightcode._llm.types import Context, StreamOptions, Tool

        async def stream(
            messages: list[Message], tools: Mapping[str, ToolDefinition]
        ) -> AsyncIterator[Event]:
            context = Context(
                system_prompt=system_prompt,
                messages=to_provider_messages(messages),
                tools=[Tool(t.name, t.description, t.parameters) for t in tools.values()],
            )
            options = StreamOptions(
                signal=self._signal,
                reasoning=None if self.thinking_level == "off" else self.thinking_level,  # type: ignore[arg-type]
                idle_timeout_ms=self.options.idle_timeout_ms,
                on_payload=self._on_payload if self._has("before_provider_request") else None,
                on_response=self._on_response if self._has("after_provider_response") else None,
            )
            self._retry_after_ms = None
            async for event in self.models.stream(self.model, context, options):
                if event["type"] == "error":
                    self._retry_after_ms = event.get("retryAfterMs")
                yield cast(Event, event)

        return stream

    async def _transform_context(self, messages: list[Message]) -> list[Message]:
        assert self.host is not None
        result = await self.host.emit("context", messages=copy.deepcopy(messages))
        return list(result) if result is not None else messages

    async def _on_payload(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        assert self.host is not None
        result = await self.host.emit("before_provider_request", payload=payload)
        return result if isinstance(result, dict) else None

    async def _on_response(self, status: int, headers: Mapping[str, str]) -> None:
        assert self.host is not None
        await self.host.emit("after_provider_response", status=status, headers=dict(headers))

    async def _before_tool_call(
        self, call_id: str, name: str, args: dict[str, Any]
    ) -> Mapping[str, Any] | None:
        assert self.host is not None
        result = await self.host.emit("tool_call", tool_call_id=call_id, tool_name=name, input=args)
        return result if isinstance(result, Mapping) else None

    async def _after_tool_call(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        content: Any,
        details: Any,
        is_error: bool,
    ) -> Mapping[str, Any] | None:
        assert self.host is not None
        patch = await self.host.emit(
            "tool_result",
            tool_call_id=call_id,
            tool_name=name,
            input=args,
            content=content,
            details=details,
            is_error=is_error,
        )
        # A tool that failed keeps its error: patches apply to successful results only.
        return None if is_error else patch
