"""Running one prompt of an :class:`~knightcode._agent.session.AgentSession`: the plugin hooks
around it, the turn loop, automatic retries and overflow recovery.

A :class:`PromptRunner` lives for one run and keeps that run's state (the abort signal, the retry
attempt, whether recovery was tried); the session it works for keeps everything else.

* **Retry.** An attempt that failed with a transient provider error (rate limit, overload, a
  dropped stream) is retried after a backoff, up to ``retry.max_retries`` times, with
  ``auto_retry_start``/``auto_retry_end`` events. The failed attempt stays in the session file
  but is not sent again.
* **Recovery.** A context overflow, or a ``length`` stop before the model's output limit, asks the
  compaction hook once per prompt (``"overflow"``/``"length"``); when it compacted and asks for a
  retry, the run continues from the compacted context.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Literal

from knightcode._agent.blocked_images import without_images
from knightcode._agent.loop import run_agent_loop, run_agent_loop_continue, tool_calls_of
from knightcode._agent.loop_types import LoopConfig, TurnInfo
from knightcode._agent.retry import last_assistant, retry_delay_ms
from knightcode._session.messages import convert_to_llm

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal
    from knightcode._agent.session import AgentSession
    from knightcode._plugins.definitions import ToolDefinition
    from knightcode._plugins.results import Block, PluginMessage, ToolResultPatch
    from knightcode._types.events import AgentEvent
    from knightcode._types.messages import (
        AgentMessage,
        AssistantMessage,
        CustomMessage,
        ImageContent,
        ToolResultContent,
    )
    from knightcode._types.stream import AssistantMessageEvent

__all__ = ["PromptRunner"]

Recovery = Literal["overflow", "length"]


class PromptRunner:
    """One run of ``agent``, aborted by ``signal``."""

    def __init__(self, agent: AgentSession, signal: AbortSignal) -> None:
        self.agent = agent
        self.signal = signal
        self.retry_attempt = 0
        self.recovery_attempted = False
        self.retry_after_ms: float | None = None

    # --- before the run -----------------------------------------------------------------------

    async def prepare(
        self,
        text: str,
        images: list[ImageContent],
        source: Literal["interactive", "rpc", "extension"],
    ) -> tuple[list[AgentMessage], str] | None:
        """Apply the ``input`` hook, expand ``/skill:name`` and prompt templates, then apply
        ``before_agent_start``: the prompt messages and the system prompt of the run, or None
        when a plugin handled the input.
        """
        from knightcode._resources.expansion import expand_input

        agent = self.agent
        hooks = agent.hooks
        system_prompt = agent.system_prompt
        if hooks is None:
            return [agent.user_message(expand_input(text, agent.resources), images)], system_prompt
        verdict = await hooks.input(text=text, images=images, source=source)
        if verdict.handled:
            return None
        text, images = verdict.text, verdict.images  # type: ignore[assignment]
        text = expand_input(text, agent.resources)
        started = await hooks.before_agent_start(
            prompt=text, images=images, system_prompt=system_prompt
        )
        prompts: list[AgentMessage] = [agent.user_message(text, images)]
        prompts.extend(_custom_message(spec) for spec in started.messages)
        return prompts, started.system_prompt or system_prompt

    # --- the run ------------------------------------------------------------------------------

    async def run(self, prompts: list[AgentMessage], system_prompt: str) -> None:
        """Compact first if needed, then run the prompt with its retries and recovery."""
        agent = self.agent
        await agent.check_compaction("before_prompt", last_assistant(agent.messages))
        config = self._loop_config(system_prompt)
        produced = await run_agent_loop(prompts, agent.messages, config, self.emit)
        while True:
            failed = last_assistant(produced)
            recovery = self._recovery_trigger(failed)
            if failed is not None and recovery is not None:
                self.recovery_attempted = True
                verdict = await agent.check_compaction(
                    recovery, failed, will_retry=_recovery_retries(failed)
                )
                if verdict is None or not verdict.retry or self.signal.aborted:
                    return
                # Like a retried error, the failed attempt stays in the session file but is not
                # sent again (nor can the run continue from an assistant message).
                agent.drop_message(failed)
                produced = await run_agent_loop_continue(agent.messages, config, self.emit)
                continue
            if (
                failed is None
                or not self._retryable(failed)
                or self.retry_attempt >= agent.retry.max_retries
            ):
                if self.retry_attempt and failed is not None:
                    self._retry_finished(failed)
                if not self.signal.aborted:
                    await agent.check_compaction("after_run", failed)
                return
            if not await self._wait_for_retry(failed):
                return
            produced = await run_agent_loop_continue(agent.messages, config, self.emit)

    async def _wait_for_retry(self, failed: AssistantMessage) -> bool:
        """Announce and wait out the backoff before the next attempt; False when aborted."""
        agent = self.agent
        self.retry_attempt += 1
        delay = retry_delay_ms(agent.retry, self.retry_attempt, self.retry_after_ms)
        agent.publish(
            {
                "type": "auto_retry_start",
                "attempt": self.retry_attempt,
                "maxAttempts": agent.retry.max_retries,
                "delayMs": delay,
                "errorMessage": failed.get("errorMessage", ""),
            }
        )
        agent.drop_message(failed)  # it stays in the session file, but is not sent again
        if await self.signal.sleep(delay / 1000):
            return True
        agent.publish(
            {
                "type": "auto_retry_end",
                "success": False,
                "attempt": self.retry_attempt,
                "finalError": "Retry cancelled",
            }
        )
        return False

    async def emit(self, event: AgentEvent) -> None:
        """The loop's events, with ``agent_end.willRetry`` filled in from this run's state."""
        if event["type"] == "agent_end":
            event["willRetry"] = self._will_retry(event["messages"])
        await self.agent.emit(event)

    def _loop_config(self, system_prompt: str) -> LoopConfig:
        agent = self.agent
        hooks = agent.hooks
        has = hooks.has if hooks is not None else _never
        return LoopConfig(
            stream=_StreamFunction(self, system_prompt),
            tools=agent.tools,
            available_tools=agent.tool_set.available,
            signal=self.signal,
            tool_context=lambda call_id, tool: agent.tool_context(
                call_id, self.signal, host_access=tool.host_access
            ),
            transform_context=self._transform_context if has("context") else None,
            before_tool_call=self._before_tool_call if has("tool_call") else None,
            after_tool_call=self._after_tool_call if has("tool_result") else None,
            get_steering=agent.queues.take_steering,
            get_follow_up=agent.queues.take_follow_up,
            prepare_next_turn=self._between_turns if has("session_check_compaction") else None,
            tool_timeout_ms=agent.options.tool_timeout_ms,
        )

    async def _between_turns(self, turn: TurnInfo) -> None:
        await self.agent.check_compaction("between_turns", turn.message)

    # --- retry and recovery decisions ---------------------------------------------------------

    def _recovery_trigger(self, message: AssistantMessage | None) -> Recovery | None:
        """``"overflow"`` or ``"length"`` when this failed attempt qualifies for the one
        compact-and-retry recovery of a prompt, else None.
        """
        from knightcode._llm.errors import is_context_overflow

        agent = self.agent
        if message is None or self.recovery_attempted or self.signal.aborted:
            return None
        hooks = agent.hooks
        if hooks is None or not hooks.has("session_check_compaction"):
            return None
        if not agent.auto_compaction_enabled:
            return None  # recovery is automatic compaction: off with it (agent_end willRetry false)
        if is_context_overflow(message, agent.model.context_window):
            return "overflow"
        output = int(message["usage"].get("output") or 0)
        # Only an *early* length stop is recovered: one that used the whole output limit would
        # stop at the same place after a compaction.
        if (
            message["stopReason"] == "length"
            and not tool_calls_of(message)
            and output < agent.model.max_tokens
        ):
            return "length"
        return None

    def _retryable(self, message: AssistantMessage) -> bool:
        from knightcode._llm.errors import is_context_overflow, is_retryable

        agent = self.agent
        if message["stopReason"] != "error" or not agent.retry.enabled or self.signal.aborted:
            return False
        return is_retryable(message) and not is_context_overflow(
            message, agent.model.context_window
        )

    def _will_retry(self, messages: list[AgentMessage]) -> bool:
        failed = last_assistant(messages)
        if failed is None:
            return False
        if self._recovery_trigger(failed) is not None:
            return _recovery_retries(failed)
        return self._retryable(failed) and self.retry_attempt < self.agent.retry.max_retries

    def _retry_finished(self, last: AssistantMessage) -> None:
        stop = last["stopReason"]
        if stop not in ("error", "aborted"):
            self.agent.publish(
                {"type": "auto_retry_end", "success": True, "attempt": self.retry_attempt}
            )
            return
        final = last.get("errorMessage", "") if stop == "error" else "Aborted"
        self.agent.publish(
            {
                "type": "auto_retry_end",
                "success": False,
                "attempt": self.retry_attempt,
                "finalError": final,
            }
        )

    # --- the provider and the hooks -----------------------------------------------------------

    async def _transform_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        assert self.agent.hooks is not None
        return await self.agent.hooks.context(messages=messages)

    async def _on_payload(self, payload: dict[str, object]) -> dict[str, object]:
        assert self.agent.hooks is not None
        return await self.agent.hooks.before_provider_request(payload=payload)

    async def _on_response(self, status: int, headers: Mapping[str, str]) -> None:
        assert self.agent.hooks is not None
        await self.agent.hooks.after_provider_response(status=status, headers=dict(headers))

    async def _before_tool_call(
        self, call_id: str, name: str, args: dict[str, object]
    ) -> Block | None:
        assert self.agent.hooks is not None
        return await self.agent.hooks.tool_call(tool_call_id=call_id, tool_name=name, input=args)

    async def _after_tool_call(
        self,
        call_id: str,
        name: str,
        args: dict[str, object],
        content: list[ToolResultContent],
        details: object,
        is_error: bool,
    ) -> ToolResultPatch | None:
        assert self.agent.hooks is not None
        return await self.agent.hooks.tool_result(
            tool_call_id=call_id,
            tool_name=name,
            input=args,
            content=content,
            details=details,
            is_error=is_error,
        )


class _StreamFunction:
    """``stream(messages, tools)`` for the loop: the session's model, system prompt and options,
    the run's abort signal, and the provider hooks.
    """

    def __init__(self, runner: PromptRunner, system_prompt: str) -> None:
        self._runner = runner
        self._system_prompt = system_prompt

    async def __call__(
        self, messages: list[AgentMessage], tools: Mapping[str, ToolDefinition]
    ) -> AsyncIterator[AssistantMessageEvent]:
        from knightcode._llm.types import Context, StreamOptions, Tool

        runner = self._runner
        agent = runner.agent
        hooks = agent.hooks
        has = hooks.has if hooks is not None else _never
        llm_messages = convert_to_llm(messages)
        if agent.options.block_images:
            llm_messages = without_images(llm_messages)
        context = Context(
            system_prompt=self._system_prompt,
            messages=llm_messages,
            tools=[Tool(t.name, t.description, t.parameters) for t in tools.values()],
        )
        level = agent.thinking_level
        options = StreamOptions(
            signal=runner.signal,
            reasoning=None if level == "off" else level,
            thinking_budgets=agent.options.thinking_budgets,
            temperature=agent.options.temperature,
            idle_timeout_ms=agent.options.idle_timeout_ms,
            on_payload=runner._on_payload if has("before_provider_request") else None,
            on_response=runner._on_response if has("after_provider_response") else None,
        )
        runner.retry_after_ms = None
        async for event in agent.model_registry.stream(agent.model, context, options):
            if event["type"] == "error":
                runner.retry_after_ms = event.get("retryAfterMs")
            yield event


def _never(hook: str) -> bool:
    return False


def _recovery_retries(message: AssistantMessage) -> bool:
    """Whether a recovery compaction is followed by a retry: not for a silent overflow (a
    complete answer whose reported input exceeded the window), which is kept as it is.
    """
    return message["stopReason"] != "stop"


def _custom_message(spec: PluginMessage) -> CustomMessage:
    """The message a ``before_agent_start`` handler added."""
    import time

    message: CustomMessage = {
        "role": "custom",
        "customType": spec.custom_type,
        "content": spec.content,
        "display": spec.display,
        "timestamp": int(time.time() * 1000),
    }
    if spec.details is not None:
        message["details"] = spec.details
    return message
